/**
 * The measurement window every adaptive limit shares (after Netflix's `WindowedLimit`): samples
 * accumulate until the window has lasted long enough and holds enough samples, then the
 * algorithm sees one summary — a percentile of the RTTs, the largest in-flight count, and
 * whether anything was dropped or timed out. The RTT store is a fixed-size reservoir, so a
 * window costs the same memory at 10 or 10 million requests per second. Internal.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import type { LimitSample } from '../concurrency-limit/limit-source.js';
import {
  clockLike,
  nonNegativeNumber,
  numberInRange,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';

/** Options every adaptive limit takes to shape its measurement windows. */
export interface WindowOptions {
  /**
   * Shortest window, in ms. A window lasts twice the smallest RTT of the window before it,
   * kept within [`minWindowMs`, `maxWindowMs`] (Netflix `WindowedLimit`). @default 1_000
   */
  readonly minWindowMs?: number;
  /** Longest window, in ms (it still waits for `minWindowSamples`). @default 1_000 */
  readonly maxWindowMs?: number;
  /** Samples a window needs before it may close (Netflix `windowSize`). @default 10 */
  readonly minWindowSamples?: number;
  /**
   * RTTs below this many ms are ignored (work that did nothing says nothing about capacity);
   * a drop is counted whatever its RTT. Netflix `minRttThreshold`. @default 0.1
   */
  readonly rttFloorMs?: number;
  /** Where time comes from; windows close on it. @default systemClock */
  readonly clock?: Clock;
}

/** Validated window settings. */
export interface WindowSettings {
  readonly minWindowMs: number;
  readonly maxWindowMs: number;
  readonly minWindowSamples: number;
  readonly rttFloorMs: number;
  readonly clock: Clock;
}

/** RTTs kept per window; beyond it, reservoir sampling keeps a uniform subset. */
export const reservoirSize = 512;

/**
 * Past this many samples in a window, the clock is read on every 8th sample only: a window
 * then closes at most 7 samples (under 1.4 %) late, and a sample costs a clock read 1 time in 8.
 */
const everySampleUpTo = 512;

const windowDefaults = {
  minWindowMs: 1_000,
  maxWindowMs: 1_000,
  minWindowSamples: 10,
  rttFloorMs: 0.1,
} as const;

/** Validates the window options of any adaptive limit. */
export function windowSettings(o: WindowOptions): WindowSettings {
  const minWindowMs = nonNegativeNumber('minWindowMs', o.minWindowMs ?? windowDefaults.minWindowMs);
  const maxWindowMs = nonNegativeNumber('maxWindowMs', o.maxWindowMs ?? windowDefaults.maxWindowMs);
  if (maxWindowMs < minWindowMs) {
    throw new SpillwayConfigError(
      'maxWindowMs',
      `at least minWindowMs (${minWindowMs})`,
      maxWindowMs,
    );
  }
  return {
    minWindowMs,
    maxWindowMs,
    minWindowSamples: positiveInteger(
      'minWindowSamples',
      o.minWindowSamples ?? windowDefaults.minWindowSamples,
    ),
    rttFloorMs: nonNegativeNumber('rttFloorMs', o.rttFloorMs ?? windowDefaults.rttFloorMs),
    clock: clockLike('clock', o.clock ?? systemClock),
  };
}

/** Validates a percentile option: a fraction in (0, 1]. */
export function percentileOption(value: unknown, fallback: number): number {
  const p = numberInRange('percentile', value ?? fallback, [0, 1]);
  if (p === 0) throw new SpillwayConfigError('percentile', 'a number above 0, up to 1', p);
  return p;
}

/** Validates a `timeoutMs` option (Infinity allowed: never a timeout). */
export function timeoutOption(value: unknown, fallback: number): number {
  if (value === Infinity) return Infinity;
  return positiveNumber('timeoutMs', value ?? fallback);
}

/** One window's worth of samples; read the summary fields after {@link SampleWindow.add} returns true. */
export class SampleWindow {
  readonly #s: WindowSettings;
  readonly #percentile: number;
  readonly #timeoutMs: number;
  readonly #rtts = new Float64Array(reservoirSize);
  #seen = 0; // RTTs offered to the reservoir this window
  #count = 0; // samples that count towards closing (RTTs at or above the floor, and drops)
  #minRtt = Infinity;
  #maxInflight = 0;
  #dropped = false;
  #startedAt = Number.NaN;
  #lengthMs: number;
  #random = 0x9e3779b9;
  // Reservoir sampling, Algorithm L (Li 1994): once full, skip ahead to the next sample to keep,
  // so the common case costs one comparison and random numbers are drawn only on replacement.
  #nextKept = 0;
  #w = 0;

  /** Percentile RTT of the closed window in ms; NaN when it held only drops. */
  rttMs = Number.NaN;
  /** Smallest RTT of the closed window; Infinity when it held only drops. */
  minRttMs = Infinity;
  /** Largest in-flight count reported in the closed window. */
  inflight = 0;
  /** Whether the closed window saw a drop or a timeout. */
  dropped = false;

  /** `percentile` in (0, 1], or 0 when the algorithm needs no RTT summary. */
  constructor(settings: WindowSettings, percentile: number, timeoutMs: number) {
    this.#s = settings;
    this.#percentile = percentile;
    this.#timeoutMs = timeoutMs;
    this.#lengthMs = settings.minWindowMs;
  }

  /** Adds a sample; true when this sample closed the window and the summary is ready. */
  add(sample: LimitSample): boolean {
    const rtt = sample.rttMs;
    let dropped = sample.dropped === true;
    const measured = rtt >= this.#s.rttFloorMs && rtt < Infinity;
    if (measured) {
      if (rtt > this.#timeoutMs) dropped = true;
      if (rtt < this.#minRtt) this.#minRtt = rtt;
      if (this.#percentile > 0) this.#keep(rtt);
    } else if (!dropped) return false;
    if (dropped) this.#dropped = true;
    if (sample.inflight > this.#maxInflight) this.#maxInflight = sample.inflight;
    const count = ++this.#count;
    if (count === 1) this.#startedAt = this.#s.clock.now();
    if (count < this.#s.minWindowSamples || (count > everySampleUpTo && (count & 7) !== 0)) {
      return false;
    }
    if (this.#s.clock.now() - this.#startedAt < this.#lengthMs) return false;
    this.#close();
    return true;
  }

  #keep(rtt: number): void {
    const seen = this.#seen++;
    if (seen < reservoirSize) {
      this.#rtts[seen] = rtt;
      if (seen === reservoirSize - 1) {
        this.#w = Math.exp(Math.log(this.#uniform()) / reservoirSize);
        this.#skipAhead(seen);
      }
      return;
    }
    if (seen < this.#nextKept) return;
    this.#rtts[Math.floor(this.#uniform() * reservoirSize)] = rtt;
    this.#w *= Math.exp(Math.log(this.#uniform()) / reservoirSize);
    this.#skipAhead(seen);
  }

  #skipAhead(from: number): void {
    this.#nextKept = from + Math.floor(Math.log(this.#uniform()) / Math.log(1 - this.#w)) + 1;
  }

  /** xorshift32 mapped into (0, 1): deterministic, and never 0 (its log is taken). */
  #uniform(): number {
    let x = this.#random;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#random = x >>> 0;
    return (this.#random + 1) / 4_294_967_297;
  }

  #close(): void {
    const n = Math.min(this.#seen, reservoirSize);
    if (n > 0 && this.#percentile > 0) {
      const kept = this.#rtts.subarray(0, n).sort();
      this.rttMs = kept[Math.max(0, Math.ceil(this.#percentile * n) - 1)]!;
    } else this.rttMs = Number.NaN;
    this.minRttMs = this.#minRtt;
    this.inflight = this.#maxInflight;
    this.dropped = this.#dropped;
    const s = this.#s;
    if (this.#minRtt < Infinity) {
      this.#lengthMs = Math.min(s.maxWindowMs, Math.max(s.minWindowMs, 2 * this.#minRtt));
    }
    this.#seen = 0;
    this.#nextKept = 0;
    this.#count = 0;
    this.#minRtt = Infinity;
    this.#maxInflight = 0;
    this.#dropped = false;
    this.#startedAt = Number.NaN;
  }
}
