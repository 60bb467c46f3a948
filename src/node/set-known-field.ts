/**
 * Sets a response field whose name and value Spillway built and knows to be valid, without
 * node:http checking it again. The RateLimit fields go on every admitted response of a quota
 * route, and through `setHeader` the two cost more than the quota's decision itself: each
 * field's name and value are tested by a regular expression, and its name lower-cased
 * (bench/quota.js). The field goes where `setHeader` puts it — node:http's own record of the
 * response's fields — so `getHeader`, `removeHeader`, a later `setHeader` and `writeHead` see
 * it as one of theirs, and the bytes on the wire are the same. Where that record is not what a
 * probe found it to be when first needed, or `setHeader` has been wrapped by someone watching
 * it, the field goes through `setHeader`.
 *
 * @module
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

type FieldRecord = Record<string, [string, string]>;

/** node:http's record of a response's fields (`kOutHeaders`), once probed; null if unusable. */
let recordKey: symbol | null | undefined;
// Compared with, never called: a response whose `setHeader` is not node:http's gets that one.
// eslint-disable-next-line @typescript-eslint/unbound-method
const nodeSetHeader = ServerResponse.prototype.setHeader;

/**
 * Sets `name` (a lower-case field name) to `value` on `res`, as `res.setHeader(name, value)`
 * would. Both must be valid: they are not checked here.
 */
export function setKnownField(res: ServerResponse, name: string, value: string): void {
  const key = (recordKey ??= probe());
  if (key === null || res.setHeader !== nodeSetHeader || res.headersSent) {
    res.setHeader(name, value);
    return;
  }
  const owner = res as unknown as Record<symbol, FieldRecord | null>;
  let record = owner[key];
  if (record === null || record === undefined) {
    record = Object.create(null) as FieldRecord;
    owner[key] = record;
  }
  record[name] = [name, value];
}

/** The record's key, if this runtime keeps fields as `setHeader` on Node 20–24 does. */
function probe(): symbol | null {
  try {
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    const key = Object.getOwnPropertySymbols(res).find((s) => s.description === 'kOutHeaders');
    if (key === undefined) return null;
    res.setHeader('X-Probe', 'one');
    const record = (res as unknown as Record<symbol, FieldRecord | null>)[key];
    const entry = record?.['x-probe'];
    if (record === null || record === undefined || Object.getPrototypeOf(record) !== null) {
      return null;
    }
    if (!Array.isArray(entry) || entry[0] !== 'X-Probe' || entry[1] !== 'one') return null;
    // And a field put there directly is one node:http reads back and sends.
    record['x-direct'] = ['x-direct', 'two'];
    res.writeHead(200);
    const head = (res as unknown as { _header?: unknown })._header;
    const sent = typeof head === 'string' && head.includes('\r\nx-direct: two\r\n');
    return sent && res.getHeader('x-direct') === 'two' ? key : null;
  } catch {
    return null;
  }
}
