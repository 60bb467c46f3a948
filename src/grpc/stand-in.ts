/**
 * A gRPC call dressed as the node:http request and response the admission guard decides on.
 * The guard's checks (penalty box → spent deadline → quota → criticality shedding → the
 * route's limit and line → the process-wide cap) read a request's path, a few fields and the
 * client's address, and watch the response for the client leaving; a gRPC call has all of
 * these under other names. Deciding through the guard itself keeps one decision path for every
 * transport, so a gRPC call gets the same answer an HTTP request would (the cross-adapter test
 * holds it to that), instead of a second copy of the checks kept in step by hand.
 *
 * - the path is the method's (`/package.Service/Method`), so routes match methods;
 * - `Spillway-Deadline` is the earlier of the call's gRPC deadline and the `spillway-deadline`
 *   metadata; criticality and attempt are the `spillway-criticality` / `spillway-attempt`
 *   metadata (names as configured), a repeated entry read as absent, as in HTTP;
 * - the client's address is the peer's; `x-forwarded-for` metadata is read only under
 *   `trustProxy`, as in HTTP;
 * - the response never takes a write (`headersSent`): the guard answers through its result,
 *   and what it would cut (a failure inside admission) is remembered as `failed`; fields it
 *   sets on an admitted request's answer (the RateLimit fields) are kept for its trailers.
 *
 * @module
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Deadline, Metadata } from '@grpc/grpc-js';
import type { Clock } from '../index.js';
import {
  formatDeadlineMs,
  maxHeaderDeadlineMs,
  parseDeadlineMs,
  type HeaderNames,
} from '../http/index.js';

/** What a `key` function (and `onError`) is told about a call. */
export interface GrpcCallInfo {
  /** The method's path: `/package.Service/Method`. */
  readonly path: string;
  /** The call's request metadata. */
  readonly metadata: Metadata;
  /** The client's address as the server saw it (no port), or `unknown`. */
  readonly address: string;
}

const callKey = Symbol('spillway.grpc.call');

interface StandInRequest {
  readonly url: string;
  readonly method: 'POST';
  readonly headers: Record<string, string>;
  readonly rawHeaders: undefined;
  readonly socket: { readonly remoteAddress: string };
  readonly [callKey]: GrpcCallInfo;
}

/** The response side: only what the guard watches, and the two ways a call can end. */
class StandInResponse extends EventEmitter {
  writableFinished = false;
  writableEnded = false;
  destroyed = false;
  closed = false;
  /** Always: the guard never writes here (its answers come back in its result). */
  readonly headersSent = true;
  readonly socket = undefined;
  /** Admission failed inside (a `key` function threw), and the guard cut the answer short. */
  failed = false;
  /** Fields the guard set for the answer (the RateLimit fields of an admitted call). */
  fields: Record<string, string> | undefined;

  setHeader(name: string, value: string | number | readonly string[]): this {
    (this.fields ??= {})[name.toLowerCase()] = Array.isArray(value)
      ? value.join(', ')
      : String(value);
    return this;
  }

  destroy(): this {
    this.failed = true;
    return this;
  }
}

/** One call as the guard sees it. */
export class CallExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly #res: StandInResponse;

  constructor(info: GrpcCallInfo, deadline: Deadline, s: ExchangeSettings) {
    const headers = fieldsOf(info.metadata, deadline, s);
    const req: StandInRequest = {
      url: info.path,
      method: 'POST',
      headers,
      rawHeaders: undefined,
      socket: { remoteAddress: info.address },
      [callKey]: info,
    };
    this.#res = new StandInResponse();
    // The guard reads only the members above; the types are node:http's.
    this.req = req as unknown as IncomingMessage;
    this.res = this.#res as unknown as ServerResponse;
  }

  /** Whether admission failed inside, so the call must be answered `INTERNAL`. */
  get failed(): boolean {
    return this.#res.failed;
  }

  /** Fields the guard set for the answer (`ratelimit-policy`, `ratelimit`), if any. */
  get fields(): Readonly<Record<string, string>> | undefined {
    return this.#res.fields;
  }

  /** Whether the call ended (cancelled, or answered) — nothing more will reach the client. */
  get ended(): boolean {
    return this.#res.destroyed || this.#res.writableFinished;
  }

  /** The call was cancelled or its deadline passed before it was answered: the client left. */
  cancel(): void {
    const res = this.#res;
    if (res.destroyed || res.writableFinished) return;
    res.destroyed = true;
    res.closed = true;
    res.emit('close');
  }

  /** The answer went out. */
  answered(): void {
    const res = this.#res;
    if (res.destroyed || res.writableFinished) return;
    res.writableFinished = true;
    res.writableEnded = true;
    res.closed = true;
    res.emit('close');
  }
}

/** What building an exchange needs from the guard. */
export interface ExchangeSettings {
  readonly names: HeaderNames;
  readonly clock: Clock;
}

/** The call behind a stand-in request (for the user's `key` and `onError`). */
export function callInfoOf(req: IncomingMessage): GrpcCallInfo {
  return (req as unknown as StandInRequest)[callKey];
}

/** The peer's address without its port: `127.0.0.1:5000` → `127.0.0.1`, `::1:5000` → `::1`. */
export function addressOfPeer(peer: string | undefined): string {
  if (typeof peer !== 'string') return 'unknown';
  const bare = peer.startsWith('[') ? peer.replace(/^\[([^\]]*)\](:\d+)?$/, '$1') : peer;
  if (isIP(bare) !== 0) return bare;
  const colon = bare.lastIndexOf(':');
  if (colon > 0 && /^\d+$/.test(bare.slice(colon + 1)) && isIP(bare.slice(0, colon)) !== 0) {
    return bare.slice(0, colon);
  }
  return 'unknown';
}

/** The fields the guard reads, from the call's metadata and deadline. */
function fieldsOf(
  metadata: Metadata,
  deadline: Deadline,
  s: ExchangeSettings,
): Record<string, string> {
  const names = s.names;
  const headers: Record<string, string> = {};
  const criticality = single(metadata, names.criticality);
  if (criticality !== undefined) headers[names.criticality] = criticality;
  const attempt = single(metadata, names.attempt);
  if (attempt !== undefined) headers[names.attempt] = attempt;
  const forwarded = metadata.get('x-forwarded-for');
  if (forwarded.length > 0) headers['x-forwarded-for'] = forwarded.map(String).join(',');
  const asked = parseDeadlineMs(single(metadata, names.deadline));
  const left = remainingMs(deadline, s.clock);
  const ms = asked === undefined ? left : left === undefined ? asked : Math.min(asked, left);
  if (ms !== undefined) headers[names.deadline] = formatDeadlineMs(ms);
  return headers;
}

/** Milliseconds left of a gRPC deadline (a wall-clock time), or undefined past a day or none. */
function remainingMs(deadline: Deadline, clock: Clock): number | undefined {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  const left = Math.max(0, at - clock.wallNow());
  return left > maxHeaderDeadlineMs ? undefined : left;
}

/** A metadata entry given once, as text; repeated or binary reads as absent. */
function single(metadata: Metadata, name: string): string | undefined {
  const values = metadata.get(name);
  return values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
}
