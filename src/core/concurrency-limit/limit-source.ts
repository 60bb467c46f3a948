/**
 * What a concurrency limit reads its limit from, and what it reports back when the limit
 * wants to learn (adaptive limits such as `gradientLimit`). Kept apart from the limiter so the
 * algorithms and the limiter depend on this small contract, not on each other.
 *
 * @module
 */

/** One finished unit of work, as a concurrency limit reports it to an adaptive limit. */
export interface LimitSample {
  /** How long the permit was held (acquire → release), in ms on the limiter's clock. */
  readonly rttMs: number;
  /** Permits held when this one was granted, itself included. */
  readonly inflight: number;
  /** The work failed in a way that signals overload (a timeout, a dependency's refusal). */
  readonly dropped: boolean;
}

/** A limit that can move (adaptive limits implement it). Read on every decision. */
export interface LimitSource {
  /** The limit now; values below 1 count as 1, fractions are floored. */
  readonly current: number;
  /**
   * If present, the limiter calls it once per released permit (except permits released as
   * `'ignored'`), after the slot is freed and before it is handed to a waiter.
   */
  onSample?(sample: LimitSample): void;
}
