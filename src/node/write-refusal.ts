/**
 * Writes a refusal to a node:http response as cheaply as the runtime allows, because a refusal
 * must cost little more than the cheapest possible answer (DESIGN.md §2, S8 in BENCHMARKS.md).
 *
 * Two costs dominate a short answer in node:http beyond the bare minimum. Every field passed to
 * `writeHead` is checked by two regular expressions and lower-cased to look for the few fields
 * node:http manages itself — per field, about as much work as the whole admission decision; and
 * on Node 20 and 22 `end(body)` corks the socket and leaves through `writev` with two buffers.
 * A response from `refusalResponse` carries its fields as lines already checked when it was
 * built, so here only `Content-Length` (and `Connection: close`) goes through `writeHead`; the
 * lines and the body are appended to the head node:http has built, and `end()` sends it all in
 * one plain write. The bytes on the wire are the same either way; anything unusual — a
 * hand-built response, a HEAD request, a wrapped `end`, fields set earlier under the same
 * names, a runtime that builds heads differently — takes the ordinary path.
 *
 * @module
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { RefusalResponse } from '../http/index.js';
import { readyRefusalOf } from '../http/refusal-response.js';

/** The two fields of node:http's outgoing message the one-write path relies on. */
interface HeadInternals {
  _header: string | null;
  _headerSent: boolean;
}

/**
 * Writes `response` (status, headers, body), adding `Connection: close` if asked: the same
 * answer as `res.writeHead(status, headers).end(body)`, in one socket write where possible.
 */
export function writeRefusal(
  res: ServerResponse,
  response: RefusalResponse,
  closeConnection: boolean,
): void {
  const ready = readyRefusalOf(response);
  if (ready !== undefined && canWriteInOne(res, response)) {
    res.writeHead(
      response.status,
      closeConnection
        ? ['content-length', ready.length, 'connection', 'close']
        : ['content-length', ready.length],
    );
    const internals = res as unknown as HeadInternals;
    // The head ends with the blank line: the other fields go in before it, the body after it.
    internals._header = internals._header!.slice(0, -2) + ready.tail;
    res.end();
    return;
  }
  const headers = closeConnection ? [...response.headers, 'connection', 'close'] : response.headers;
  res.writeHead(response.status, headers);
  res.end(response.body);
}

function canWriteInOne(res: ServerResponse, response: RefusalResponse): boolean {
  return (
    runtimeBuildsStringHeads() &&
    // Wrapped by something (compression, say) that expects to see the body pass through.
    res.writeHead === ServerResponse.prototype.writeHead &&
    res.end === ServerResponse.prototype.end &&
    !res.headersSent &&
    !res.strictContentLength &&
    res.req.method !== 'HEAD' &&
    (res.getHeaderNames().length === 0 || !collides(res, response.headers))
  );
}

/** Whether a field set on `res` beforehand has the name of one of the refusal's own. */
function collides(res: ServerResponse, headers: readonly string[]): boolean {
  for (let i = 0; i < headers.length; i += 2) if (res.hasHeader(headers[i]!)) return true;
  return false;
}

let stringHeads: boolean | undefined;

/**
 * Whether this runtime's `writeHead` leaves the head as a string ending in the blank line, not
 * yet sent (node:http does on Node 20, 22 and 24). Checked once, on a response to nobody.
 */
function runtimeBuildsStringHeads(): boolean {
  if (stringHeads === undefined) {
    try {
      const probe = new ServerResponse(new IncomingMessage(new Socket()));
      probe.writeHead(503, ['content-length', '0']);
      const internals = probe as unknown as Partial<HeadInternals>;
      stringHeads =
        typeof internals._header === 'string' &&
        internals._header.endsWith('\r\n\r\n') &&
        internals._headerSent === false;
    } catch {
      stringHeads = false;
    }
  }
  return stringHeads;
}
