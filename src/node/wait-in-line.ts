/**
 * The wait in a route's line: a request that found every slot taken, but room in the line,
 * waits there for a slot until its deadline, and leaves at once if its client goes away. The
 * one step of admission that allocates for a request (a controller, a listener, a promise), so
 * the checks before it refuse at the door whatever the line could not serve.
 *
 * @module
 */
import type { AcquireResult, ConcurrencyLimit, Permit } from '../index.js';
import { clientGone, type ContextInit } from './request-context.js';

/** A limit's refusal: why there is no slot. */
export type Rejection = Exclude<AcquireResult, { ok: true }>;

/** Where a wait lands (the checks that sent the request into line). */
export interface Landing<R> {
  /** A slot for a client still there; the request's signal is `controller`'s. */
  admit(init: ContextInit, permit: Permit, controller: AbortController): R;
  /** No slot: the line's reason, `aborted` when the client left. */
  refuse(init: ContextInit, rejection: Rejection): R;
}

const left: Rejection = Object.freeze({ ok: false, reason: 'aborted' });

/** Waits in `limiter`'s line for the request `init` describes, then hands over to `landing`. */
export function waitInLine<R>(
  limiter: ConcurrencyLimit,
  init: ContextInit,
  landing: Landing<R>,
): Promise<R> {
  const res = init.res;
  const controller = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort();
  };
  res.once('close', onClose);
  return limiter
    .acquire({ signal: controller.signal, criticality: init.criticality, deadline: init.expiresAt })
    .then((r) => {
      res.removeListener('close', onClose);
      if (!r.ok) return landing.refuse(init, r);
      if (controller.signal.aborted || clientGone(res)) {
        // Granted to a client already gone: given back, saying nothing about the work.
        r.permit.release('ignored');
        return landing.refuse(init, left);
      }
      return landing.admit(init, r.permit, controller);
    });
}
