/**
 * When a guard in a framework that writes the response after its middleware returns (Koa, Hono
 * over `@hono/node-server`) lets go of a slot. A streamed body is produced while it is written,
 * so the work of a request is over when both have happened: the middleware after the guard has
 * settled, and the response has ended on the socket (or the client has gone, which ends a
 * streamed body too: Koa destroys it, Hono cancels it).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { Admitted } from './request-context.js';

/** Settles `context` once `res` is over; call it when the downstream middleware has settled. */
export function settleAfterResponse(context: Admitted, res: ServerResponse): void {
  // `close` comes after `finish`, and also when the connection is lost first.
  if (res.closed || res.destroyed) context.settle();
  else res.once('close', () => context.settle());
}
