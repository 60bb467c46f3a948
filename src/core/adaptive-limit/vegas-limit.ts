/**
 * TCP Vegas applied to concurrency (Netflix `VegasLimit`): estimate how many requests are
 * queued from how far the RTT sits above the no-load RTT (queue = L · (1 − noLoad / rtt)), grow
 * while the queue is short, shrink while it is long. Thresholds scale with log10 of the limit.
 * The no-load RTT is the smallest window RTT seen; now and then (every 15–30 × L windows,
 * jittered) it is reset to the current RTT so a service that became slower for good is learnt.
 *
 * @module
 */
import type { LimitSample } from '../concurrency-limit/limit-source.js';
import { numberInRange, optionsObject, positiveInteger } from '../internal/validate.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import {
  LimitState,
  limitBounds,
  type AdaptiveLimit,
  type LimitBounds,
  type LimitBoundsOptions,
} from './adaptive-limit.js';
import {
  SampleWindow,
  percentileOption,
  windowSettings,
  type WindowOptions,
} from './sample-window.js';

/** Options of {@link vegasLimit}. Defaults are Netflix's, so configurations port as they are. */
export interface VegasLimitOptions extends LimitBoundsOptions, WindowOptions {
  /** @default 20 */
  readonly initialLimit?: number;
  /** Netflix has no minimum other than 1. @default 1 */
  readonly minLimit?: number;
  /** Netflix `maxConcurrency`. @default 1_000 */
  readonly maxLimit?: number;
  /** Weight of each new estimate, in (0, 1]; 1 jumps straight to it. @default 1 */
  readonly smoothing?: number;
  /** The no-load RTT is reset every `probeMultiplier` × U[0.5, 1) × limit windows. @default 30 */
  readonly probeMultiplier?: number;
  /**
   * Which RTT of a window stands for it, as a fraction (0.5 = median). Netflix's windowed
   * Vegas sees the window's mean; the median is not pulled around by a few outliers. @default 0.5
   */
  readonly percentile?: number;
  /** Source of the probe jitter, uniform in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/**
 * Creates a Vegas limit.
 *
 * @example
 * const db = concurrencyLimit({ limit: vegasLimit({ maxLimit: 200 }) });
 */
export function vegasLimit(options?: VegasLimitOptions): AdaptiveLimit {
  const o = optionsObject('vegasLimit options', options);
  const bounds = limitBounds(o, { initialLimit: 20, minLimit: 1, maxLimit: 1_000 });
  const smoothing = numberInRange('smoothing', o.smoothing ?? 1, [0, 1]);
  if (smoothing === 0) throw new SpillwayConfigError('smoothing', 'a number above 0, up to 1', 0);
  const random = o.random ?? Math.random;
  if (typeof random !== 'function') {
    throw new SpillwayConfigError('random', 'a function returning a number in [0, 1)', random);
  }
  const percentile = percentileOption(o.percentile, 0.5);
  return new Vegas({
    ...bounds,
    window: new SampleWindow(windowSettings(o), percentile, Infinity),
    smoothing,
    probeMultiplier: positiveInteger('probeMultiplier', o.probeMultiplier ?? 30),
    random,
  });
}

interface VegasSettings extends LimitBounds {
  readonly window: SampleWindow;
  readonly smoothing: number;
  readonly probeMultiplier: number;
  readonly random: () => number;
}

/** max(1, ⌊log10 L⌋): 1 below 100, 2 from 100 to 999, … */
function log10Floor(limit: number): number {
  return Math.max(1, Math.floor(Math.log10(limit)));
}

class Vegas extends LimitState implements AdaptiveLimit {
  readonly #s: VegasSettings;
  #estimate: number;
  #noLoadRtt = 0;
  #probeCount = 0;
  #probeJitter: number;

  constructor(s: VegasSettings) {
    super(s.initialLimit);
    this.#s = s;
    this.#estimate = s.initialLimit;
    this.#probeJitter = this.#jitter();
  }

  onSample(sample: LimitSample): void {
    const w = this.#s.window;
    if (w.add(sample)) this.#update(w.rttMs, w.inflight, w.dropped);
  }

  #jitter(): number {
    const r = this.#s.random();
    return 0.5 + 0.5 * (r >= 0 && r < 1 ? r : 0.5);
  }

  #update(rtt: number, inflight: number, dropped: boolean): void {
    const s = this.#s;
    const limit = Math.floor(this.#estimate);
    const measured = rtt === rtt;
    if (measured) {
      this.#probeCount++;
      if (this.#probeJitter * s.probeMultiplier * limit <= this.#probeCount) {
        // Forget the no-load RTT now and then, so a lasting slowdown is eventually learnt.
        this.#probeJitter = this.#jitter();
        this.#probeCount = 0;
        this.#noLoadRtt = rtt;
        return;
      }
      if (this.#noLoadRtt === 0 || rtt < this.#noLoadRtt) {
        this.#noLoadRtt = rtt;
        return;
      }
    } else if (!dropped) return;
    const log = log10Floor(limit);
    let next: number;
    if (dropped) next = limit - log;
    else if (inflight * 2 < limit)
      return; // app-limited: the RTT says nothing about the limit
    else {
      const queue = Math.ceil(limit * (1 - this.#noLoadRtt / rtt));
      if (queue <= log) next = limit + 6 * log;
      else if (queue < 3 * log) next = limit + log;
      else if (queue > 6 * log) next = limit - log;
      else return;
    }
    next = Math.min(s.maxLimit, Math.max(s.minLimit, next));
    this.#estimate = (1 - s.smoothing) * this.#estimate + s.smoothing * next;
    this.set(this.#estimate, rtt, dropped);
  }
}
