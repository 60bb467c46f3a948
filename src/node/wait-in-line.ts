/**
 * The wait in a route's line: a request that found every slot taken, but room in the line,
 * waits there for a slot until its deadline, and leaves at once if its client goes away. The
 * one step of admission that allocates for a request (a place, a listener, a promise), so the
 * checks before it refuse at the door whatever the line could not serve.
 *
 * It waits without an `AbortSignal`: a controller, its signal and an abort listener weigh about
 * half a kilobyte, and a queued request keeps them for as long as it waits, long enough to be
 * copied by the young-generation collector. At 10 × capacity that was a third more surviving
 * bytes per scavenge than a server without a line. The request's controller is made when it is
 * admitted, as for a request admitted at the door.
 *
 * @module
 */
import type { AcquireResult, Permit } from '../index.js';
import type { OwnedConcurrencyLimit } from '../core/internal/owned.js';
import { clientGone, type ContextInit } from './request-context.js';

/** A limit's refusal: why there is no slot. */
export type Rejection = Exclude<AcquireResult, { ok: true }>;

/** Where a wait lands (the checks that sent the request into line). */
export interface Landing<R> {
  /** A slot for a client still there. */
  admit(init: ContextInit, permit: Permit): R;
  /** No slot: the line's reason, `aborted` when the client left. */
  refuse(init: ContextInit, rejection: Rejection): R;
}

const left: Rejection = Object.freeze({ ok: false, reason: 'aborted' });

/** Waits in `limiter`'s line for the request `init` describes, then hands over to `landing`. */
export function waitInLine<R>(
  limiter: OwnedConcurrencyLimit,
  init: ContextInit,
  landing: Landing<R>,
): Promise<R> {
  const res = init.res;
  const place = limiter.enter(init.criticality, init.expiresAt);
  const onClose = (): void => {
    if (!res.writableFinished) place.leave();
  };
  res.on('close', onClose);
  return place.result.then((r) => {
    res.removeListener('close', onClose);
    if (!r.ok) return landing.refuse(init, r);
    if (clientGone(res)) {
      // Granted to a client already gone: given back, saying nothing about the work.
      r.permit.release('ignored');
      return landing.refuse(init, left);
    }
    return landing.admit(init, r.permit);
  });
}
