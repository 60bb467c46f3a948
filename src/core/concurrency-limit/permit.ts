/**
 * A held slot. Released once, by its holder, when the work has settled: never by a timeout,
 * never twice (a second `release()` is a no-op). `using permit = …` works too.
 *
 * @module
 */
import { SpillwayArgumentError } from '../errors/argument-error.js';

/**
 * How the work under a permit ended, for adaptive limits: `ok` (a normal result, the default),
 * `dropped` (timed out, or refused or overloaded downstream: a congestion signal), `ignored`
 * (failed before it measured anything, such as a validation error: no sample at all).
 */
export type PermitOutcome = 'ok' | 'dropped' | 'ignored';

/** A slot in a concurrency limit, held until `release()`. */
export interface Permit extends Disposable {
  /**
   * Gives the slot back (to the next waiter, if any). Idempotent: only the first call counts.
   * `outcome` tells an adaptive limit how the work ended. @default 'ok'
   */
  release(outcome?: PermitOutcome): void;
  /** True once released. */
  readonly released: boolean;
}

/** What a permit calls back into; implemented by the limiter that issued it. */
export interface PermitOwner {
  releasePermit(permit: SlotPermit, outcome: PermitOutcome | undefined): void;
}

/**
 * The limiter's permit. `acquiredAt` is NaN unless somebody measures hold times; `inflight` is
 * the number of permits held once this one was granted.
 */
export class SlotPermit implements Permit {
  #owner: PermitOwner | undefined;
  readonly acquiredAt: number;
  readonly inflight: number;
  /** Criticality rank of the holder; set by a partitioned limiter, which counts per rank. */
  rank = 1;

  constructor(owner: PermitOwner, acquiredAt: number, inflight: number) {
    this.#owner = owner;
    this.acquiredAt = acquiredAt;
    this.inflight = inflight;
  }

  get released(): boolean {
    return this.#owner === undefined;
  }

  release(outcome?: PermitOutcome): void {
    const owner = this.#owner;
    if (owner === undefined) return;
    this.#owner = undefined;
    if (
      outcome === undefined ||
      outcome === 'ok' ||
      outcome === 'dropped' ||
      outcome === 'ignored'
    ) {
      owner.releasePermit(this, outcome);
      return;
    }
    // Free the slot first: a typo must never leak capacity.
    owner.releasePermit(this, 'ok');
    throw new SpillwayArgumentError('outcome', "one of 'ok', 'dropped', 'ignored'", outcome);
  }

  [Symbol.dispose](): void {
    this.release();
  }
}
