/**
 * Tells a retry storm from a spike, as Google's backends do (SRE book, "Handling Overload"):
 * from a decaying histogram of the attempt numbers arrivals carry. When most of what arrives
 * has already been refused somewhere, the pool behind the callers is overloaded, not just this
 * task, and retrying elsewhere only adds load: a refusal should say "stop". A spike of first
 * tries, however large, never looks like one.
 *
 * The state has hysteresis: entered when retries' share of arrivals passes `retryShare` (with
 * at least `minArrivals` of decayed weight), left when it falls to `leaveShare` or the weight
 * falls below `minArrivals`. It is decided at each arrival, so it costs a multiplication and a
 * comparison there, and `onChange` is told only when it flips.
 *
 * @module
 */
import { systemClock, type Clock } from '../clock/clock.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import { clockLike, optionsObject, positiveNumber } from '../internal/validate.js';
import { Histogram, attemptHistogramDefaults, type AttemptHistogram } from './attempt-histogram.js';

/** Options of {@link retryStorm}. */
export interface RetryStormOptions {
  /**
   * Retries' share of arrivals (attempt 2 or more, decayed) above which the storm is entered.
   * Above 0 and below 1. @default 0.5
   */
  readonly retryShare?: number;
  /**
   * The share at or below which a storm is left: from 0 to below `retryShare`, so a share
   * that hovers at the threshold does not flip the signal on every arrival.
   * @default 0.6 × retryShare
   */
  readonly leaveShare?: number;
  /**
   * Decayed weight of arrivals needed to be in a storm (the share of a handful of requests
   * says nothing); about rate × `halfLifeMs` / ln 2 at a steady rate. @default 20
   */
  readonly minArrivals?: number;
  /** Time for an arrival's weight to halve, in ms. @default 2_000 */
  readonly halfLifeMs?: number;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** Told when a storm is entered or left. */
export interface RetryStormChange {
  /** True when the storm was entered, false when it was left. */
  readonly active: boolean;
  /** Retries' share of arrivals when it flipped. */
  readonly retryShare: number;
  /** The decayed weight of arrivals when it flipped. */
  readonly arrivals: number;
}

/** A retry-storm detector over one stream of arrivals (a route's, say). */
export interface RetryStorm {
  /** Counts an arrival of attempt `attempt` at `now` (read when not given) and decides again. */
  record(attempt: number, now?: number): void;
  /** Whether arrivals are in a storm, as decided at the last arrival. */
  readonly active: boolean;
  /** The histogram it decides from (read it for metrics). */
  readonly histogram: AttemptHistogram;
  /** Told when the storm is entered or left; nothing is built while nobody listens. */
  readonly onChange: Event<RetryStormChange>;
}

/** The defaults of {@link retryStorm} (`leaveShare` is 0.6 × `retryShare`). */
export const retryStormDefaults = Object.freeze({
  retryShare: 0.5,
  leaveShareRatio: 0.6,
  minArrivals: 20,
  halfLifeMs: attemptHistogramDefaults.halfLifeMs,
});

/** A detector's checked settings. */
export interface RetryStormSettings {
  readonly retryShare: number;
  readonly leaveShare: number;
  readonly minArrivals: number;
  readonly halfLifeMs: number;
}

/**
 * Checks retry-storm options and fills in the defaults; `prefix` goes before each option's
 * name in a `SpillwayConfigError` (`'api.retryStorm.'`). For components that take these
 * options inside their own.
 */
export function retryStormSettings(
  options: Omit<RetryStormOptions, 'clock'> | undefined,
  prefix = '',
): RetryStormSettings {
  const o = optionsObject(prefix === '' ? 'retryStorm options' : prefix.slice(0, -1), options);
  const retryShare = o.retryShare ?? retryStormDefaults.retryShare;
  if (typeof retryShare !== 'number' || !(retryShare > 0 && retryShare < 1)) {
    throw new SpillwayConfigError(
      `${prefix}retryShare`,
      'a number above 0 and below 1',
      retryShare,
    );
  }
  const leaveShare = o.leaveShare ?? retryStormDefaults.leaveShareRatio * retryShare;
  if (typeof leaveShare !== 'number' || !(leaveShare >= 0 && leaveShare < retryShare)) {
    throw new SpillwayConfigError(
      `${prefix}leaveShare`,
      `a number from 0 to below retryShare (${retryShare})`,
      leaveShare,
    );
  }
  const minArrivals = o.minArrivals ?? retryStormDefaults.minArrivals;
  if (typeof minArrivals !== 'number' || !(minArrivals >= 1 && minArrivals <= 1e9)) {
    throw new SpillwayConfigError(`${prefix}minArrivals`, 'a number from 1 to 1e9', minArrivals);
  }
  const halfLifeMs = positiveNumber(
    `${prefix}halfLifeMs`,
    o.halfLifeMs ?? retryStormDefaults.halfLifeMs,
  );
  return { retryShare, leaveShare, minArrivals, halfLifeMs };
}

/**
 * Creates a retry-storm detector.
 *
 * @example
 * const storm = retryStorm({ retryShare: 0.5 });
 * storm.record(attempt);
 * const signal = refusing && storm.active ? 'never' : 'later';
 */
export function retryStorm(options?: RetryStormOptions): RetryStorm {
  const clock = clockLike('clock', options?.clock ?? systemClock);
  return new Storm(retryStormSettings(options), clock);
}

/** The detector, for components that checked its settings themselves. Internal. */
export class Storm implements RetryStorm {
  readonly histogram: Histogram;
  readonly #enter: number;
  readonly #leave: number;
  readonly #min: number;
  #active = false;
  readonly #changed = new Emitter<RetryStormChange>();
  readonly onChange = this.#changed.event;

  constructor(s: RetryStormSettings, clock: Clock) {
    this.histogram = new Histogram({
      buckets: attemptHistogramDefaults.buckets,
      halfLifeMs: s.halfLifeMs,
      clock,
    });
    this.#enter = s.retryShare;
    this.#leave = s.leaveShare;
    this.#min = s.minArrivals;
  }

  get active(): boolean {
    return this.#active;
  }

  record(attempt: number, now?: number): void {
    const h = this.histogram;
    h.record(attempt, now);
    // As of the arrival just counted (the histogram decayed to it, give or take a step).
    const arrivals = h.arrivalsSoFar;
    const retries = h.retriesSoFar;
    if (this.#active) {
      if (arrivals < this.#min || retries <= this.#leave * arrivals) this.#flip(false, h);
    } else if (arrivals >= this.#min && retries > this.#enter * arrivals) this.#flip(true, h);
  }

  #flip(active: boolean, h: Histogram): void {
    this.#active = active;
    if (this.#changed.size === 0) return;
    this.#changed.emit({ active, retryShare: h.retryShare, arrivals: h.arrivalsSoFar });
  }
}
