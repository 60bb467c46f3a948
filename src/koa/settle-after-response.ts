/**
 * When a Koa guard lets go of a slot. Koa writes the response only after every middleware has
 * returned, and a streamed body is read while it is written, so the work of a request is over
 * when both have happened: the middleware after the guard has settled, and the response has
 * ended (or the client has gone, which also ends a streamed body: Koa destroys it).
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
