/**
 * The one answer to a request that failed for a reason that is not overload — a handler's bug,
 * or a failure inside admission itself (a `key` function that threw): a 500 with a problem
 * body that says nothing about the cause, the same from every adapter. The cause goes to the
 * guard's `onError`, never to the client.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const body =
  '{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"The request failed on the server."}';
const headers = ['content-type', 'application/problem+json', 'content-length', String(body.length)];

/**
 * Writes the 500, or, when an answer has already begun (or cannot be written at all), cuts the
 * connection so the client does not take a partial answer for a whole one. Never throws.
 */
export function writeFailure(res: ServerResponse): void {
  try {
    if (res.headersSent || res.destroyed) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    res.writeHead(500, headers);
    res.end(body);
  } catch {
    // A response that cannot be written to (a framework's wrapper that throws) is dropped.
    res.destroy();
  }
}

/** The default `onError`: one line on stderr, whatever was thrown. */
export function logFailure(error: unknown, req: IncomingMessage): void {
  let text: string;
  try {
    text = String(error);
  } catch {
    text = Object.prototype.toString.call(error);
  }
  process.stderr.write(`spillway: ${req.method} ${req.url} failed: ${text}\n`);
}
