/**
 * A decaying histogram of the attempt numbers requests arrive with (`Spillway-Attempt`): first
 * tries, second tries, … and `buckets` or more together, each arrival's weight halving every
 * `halfLifeMs`. Memory is `buckets + 2` numbers whatever the traffic. Counting an arrival is a
 * subtraction, a comparison and three additions: the decay is applied to every bucket at once,
 * at most once per sixteenth of a half-life, so an arrival's weight is off by at most a factor
 * of 2^(1/16) (4 %) and a busy route pays for it a few times a second, not per request.
 *
 * @module
 */
import { systemClock, type Clock } from '../clock/clock.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { clockLike, optionsObject, positiveNumber } from '../internal/validate.js';

/** Options of {@link attemptHistogram}. */
export interface AttemptHistogramOptions {
  /** Buckets: one each for attempts 1 … `buckets` − 1, one for `buckets` or more. From 2 to 100. @default 4 */
  readonly buckets?: number;
  /** Time for an arrival's weight to halve, in ms. @default 2_000 */
  readonly halfLifeMs?: number;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** Decayed counts of the attempt numbers arrivals carried. */
export interface AttemptHistogram {
  /**
   * Counts one arrival of attempt `attempt` (1 = a first try; anything below 2, or not a
   * number, counts as one) at `now` on the clock, read when not given.
   */
  record(attempt: number, now?: number): void;
  /** The decayed weight of every arrival at `now` (read when not given). */
  arrivals(now?: number): number;
  /** The decayed weight of the arrivals that were retries (attempt 2 or more) at `now`. */
  retries(now?: number): number;
  /** Retries' share of arrivals, 0 to 1 (0 before any arrival). Decay does not change it. */
  readonly retryShare: number;
  /** Each bucket's decayed weight at `now` (a new array; index 0 holds first tries). */
  counts(now?: number): number[];
  readonly buckets: number;
  readonly halfLifeMs: number;
}

/** The defaults of {@link attemptHistogram}. */
export const attemptHistogramDefaults = Object.freeze({ buckets: 4, halfLifeMs: 2_000 });

/** Steps per half-life at which the decay is applied. */
const stepsPerHalfLife = 16;
/** Weights below this fraction of one arrival are dropped (after some 40 half-lives). */
const negligible = 1e-12;

/**
 * Creates an attempt histogram.
 *
 * @example
 * const h = attemptHistogram({ halfLifeMs: 2_000 });
 * h.record(parseAttempt(req.headers['spillway-attempt']) ?? 1);
 * if (h.retryShare > 0.5) console.warn('most arrivals are retries');
 */
export function attemptHistogram(options?: AttemptHistogramOptions): AttemptHistogram {
  const o = optionsObject('attemptHistogram options', options);
  const buckets = o.buckets ?? attemptHistogramDefaults.buckets;
  if (!Number.isInteger(buckets) || buckets < 2 || buckets > 100) {
    throw new SpillwayConfigError('buckets', 'a whole number from 2 to 100', buckets);
  }
  return new Histogram({
    buckets,
    halfLifeMs: positiveNumber('halfLifeMs', o.halfLifeMs ?? attemptHistogramDefaults.halfLifeMs),
    clock: clockLike('clock', o.clock ?? systemClock),
  });
}

/** An attempt histogram's checked settings. */
export interface AttemptHistogramSettings {
  readonly buckets: number;
  readonly halfLifeMs: number;
  readonly clock: Clock;
}

/** The histogram, for the components that build it from settings they checked. Internal. */
export class Histogram implements AttemptHistogram {
  readonly buckets: number;
  readonly halfLifeMs: number;
  readonly #clock: Clock;
  readonly #stepMs: number;
  // [arrivals, retries, bucket 1, …, bucket n]: one typed array, so updates box nothing.
  readonly #w: Float64Array;
  /** When the weights were last decayed, on the clock. */
  #decayedAt: number;

  constructor(s: AttemptHistogramSettings) {
    this.buckets = s.buckets;
    this.halfLifeMs = s.halfLifeMs;
    this.#clock = s.clock;
    this.#stepMs = s.halfLifeMs / stepsPerHalfLife;
    this.#w = new Float64Array(s.buckets + 2);
    this.#decayedAt = s.clock.now();
  }

  record(attempt: number, now = this.#clock.now()): void {
    if (now - this.#decayedAt >= this.#stepMs) this.#decay(now);
    const w = this.#w;
    w[0]! += 1;
    if (attempt >= 2) {
      w[1]! += 1;
      w[attempt >= this.buckets ? this.buckets + 1 : (attempt | 0) + 1]! += 1;
    } else w[2]! += 1;
  }

  arrivals(now = this.#clock.now()): number {
    this.#decayIfDue(now);
    return this.#w[0]!;
  }

  retries(now = this.#clock.now()): number {
    this.#decayIfDue(now);
    return this.#w[1]!;
  }

  /** {@link arrivals} as of the last arrival counted, without reading the clock. Internal. */
  get arrivalsSoFar(): number {
    return this.#w[0]!;
  }

  /** {@link retries} as of the last arrival counted, without reading the clock. Internal. */
  get retriesSoFar(): number {
    return this.#w[1]!;
  }

  get retryShare(): number {
    const arrivals = this.#w[0]!;
    return arrivals > 0 ? this.#w[1]! / arrivals : 0;
  }

  counts(now = this.#clock.now()): number[] {
    this.#decayIfDue(now);
    return Array.from(this.#w.subarray(2));
  }

  #decayIfDue(now: number): void {
    if (now - this.#decayedAt >= this.#stepMs) this.#decay(now);
  }

  /** Scales every weight by the decay since the last step (time never runs backwards here). */
  #decay(now: number): void {
    const w = this.#w;
    const factor = 2 ** ((this.#decayedAt - now) / this.halfLifeMs);
    this.#decayedAt = now;
    if (w[0]! * factor < negligible) {
      w.fill(0);
      return;
    }
    for (let i = 0; i < w.length; i++) w[i]! *= factor;
  }
}
