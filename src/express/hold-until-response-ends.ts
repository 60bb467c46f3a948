/**
 * How long `app.use(guard)` holds a slot. Middleware cannot see when the work of the routes
 * after it settles, only what happens to the response, so that is what it goes by:
 * - the response ends (the handler called `res.end`, `res.send`, …) → the slot is released;
 * - the client leaves first → the slot is held on, because the work usually goes on for a
 *   while, until the handler ends the response (do, even after a disconnect: `res.end()` on a
 *   closed response is harmless) or the route's own deadline (`deadlineMs`) passes, whichever
 *   comes first. A client that leaves cannot free a slot while the work goes on, so the cap
 *   bounds the work, for at most the route's deadline after the request arrived.
 *
 * `guard.route(handler)` has no such limit: it holds the slot until the handler's promise
 * settles.
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { TimerHandle } from '../index.js';
import type { Admitted } from '../node/index.js';

/** Settles `context` when `res` ends, or after a disconnect as described above. */
export function holdUntilResponseEnds(context: Admitted, res: ServerResponse): void {
  let timer: TimerHandle | undefined;
  const ended = (): void => {
    res.removeListener('prefinish', ended);
    res.removeListener('finish', ended);
    res.removeListener('close', closed);
    if (timer !== undefined) context.clock.clearTimer(timer);
    context.settle();
  };
  const closed = (): void => {
    res.removeListener('close', closed);
    // Ended by the handler, and only its last bytes were still on their way: nothing runs on.
    if (res.writableEnded) {
      ended();
      return;
    }
    const left = context.routeExpiresAt - context.clock.now();
    timer = context.clock.setTimer(left > 0 ? left : 0, ended);
  };
  // `finish` never comes once the socket is gone; `prefinish` still marks the handler's end().
  res.once('prefinish', ended);
  res.once('finish', ended);
  if (res.closed || res.destroyed) closed();
  else res.once('close', closed);
}
