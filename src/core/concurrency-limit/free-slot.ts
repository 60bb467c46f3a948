/**
 * A free slot of a limit for a caller that waits for a release when there is none — a
 * broker consumer's pump, which leaves a message in the broker rather than refuse it.
 * `tryAcquire` would report each look that finds the limit full to the limit's `onReject`
 * listeners as a `queue-full` refusal: on a limit shared with other work, a busy consumer's
 * polling would then show as a stream of refusals nobody received, and, fed to an adaptive
 * limit as drops (docs/adaptive.md), push it down.
 *
 * @module
 */
import { Limiter } from './limiter.js';
import type { Permit } from './permit.js';
import type { ConcurrencyLimit } from './types.js';

/**
 * A permit for a free slot of `limit` now, or `undefined`, reporting no refusal. A limit made
 * by another implementation (or another installed copy of Spillway) can only be asked with
 * `tryAcquire`, which may report one.
 */
export function freeSlot(limit: ConcurrencyLimit): Permit | undefined {
  const r = limit instanceof Limiter ? limit.freeSlot() : limit.tryAcquire();
  return r?.ok === true ? r.permit : undefined;
}
