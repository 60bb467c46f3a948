/**
 * When a Hono guard lets go of a slot. `@hono/node-server` writes the Response only after the
 * app has returned it, and a streamed body (`stream()`, `streamSSE()`) is produced while it is
 * written, so the work of a request is over when both have happened: the middleware after the
 * guard has settled, and the response has ended on the socket (or the client has gone, which
 * cancels a streamed body).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { Admitted } from '../node/index.js';

/** Settles `context` once `res` is over; call it when the downstream middleware has settled. */
export function settleAfterResponse(context: Admitted, res: ServerResponse): void {
  // `close` comes after `finish`, and also when the connection is lost first.
  if (res.closed || res.destroyed) context.settle();
  else res.once('close', () => context.settle());
}
