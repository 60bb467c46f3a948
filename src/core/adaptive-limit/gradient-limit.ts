/**
 * A delay-gradient limit after Netflix's `Gradient2Limit`: compare the RTT of the latest window
 * (short term) with a slow average of past windows (long term). While the short RTT stays within
 * `rttTolerance` × the long one, the limit grows by `queueSize`; beyond it, the limit shrinks in
 * proportion (gradient clamped to [0.5, 1]); every change is smoothed.
 *
 * Three deliberate differences from Gradient2, each because of a failure it has:
 * - **Drops and timeouts cut the limit** (× `backoffRatio`). Gradient2 ignores them, so work
 *   that times out before it can look slow never shrinks the limit.
 * - **A percentile, not the mean**, stands for a window (p90 by default): queueing shows in the
 *   tail first, and a single outlier cannot drag a mean around.
 * - **The long-term RTT learns only from windows that show (next to) no queueing**: app-limited
 *   ones, and those within a quarter of the tolerance band of it (1.125× by default). Gradient2
 *   averages every window in, so under sustained saturation its baseline follows the queueing
 *   the limit itself causes and the limit creeps up to `maxLimit` (in a simulation, from
 *   1.5 × capacity to the maximum in ~600 windows). So that a lasting slowdown is still
 *   learnt, a limit pinned at `minLimit` for 10 congested windows in a row takes the present
 *   RTT as its new baseline (as Envoy re-measures its minimum RTT after 5 windows at the
 *   floor). A window faster than the baseline pulls it down
 *   by half the gap (Gradient2: × 0.95, and only beyond a 2× gap), so after a slow spell the
 *   baseline is back at the true no-load RTT before the recovering limit passes capacity.
 *
 * @module
 */
import type { LimitSample } from '../concurrency-limit/limit-source.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import {
  nonNegativeNumber,
  numberInRange,
  optionsObject,
  positiveInteger,
} from '../internal/validate.js';
import { backoffRatioOption } from './aimd-limit.js';
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
  timeoutOption,
  windowSettings,
  type WindowOptions,
} from './sample-window.js';

/** Options of {@link gradientLimit}. Defaults are Gradient2's, so configurations port as they are. */
export interface GradientLimitOptions extends LimitBoundsOptions, WindowOptions {
  /** @default 20 */
  readonly initialLimit?: number;
  /** @default 20 */
  readonly minLimit?: number;
  /** Netflix `maxConcurrency`. @default 200 */
  readonly maxLimit?: number;
  /** Weight of each new estimate, in (0, 1]. @default 0.2 */
  readonly smoothing?: number;
  /** How far (×) the short RTT may exceed the long one before the limit shrinks; ≥ 1. @default 1.5 */
  readonly rttTolerance?: number;
  /** Headroom added to the limit at every window: room to probe for more. @default 4 */
  readonly queueSize?: number;
  /** Windows averaged by the long-term RTT (an exponential average, after 10 windows of warm-up). @default 600 */
  readonly longWindow?: number;
  /** Factor applied on a window with a drop or a timeout, in [0.5, 1). @default 0.9 */
  readonly backoffRatio?: number;
  /** A sample slower than this many ms counts as a drop. `Infinity` disables it. @default 5_000 */
  readonly timeoutMs?: number;
  /** Which RTT of a window stands for it, as a fraction. @default 0.9 */
  readonly percentile?: number;
}

/**
 * Creates a gradient limit: the recommended adaptive limit.
 *
 * @example
 * const limit = gradientLimit({ minLimit: 5, maxLimit: 100, minWindowMs: 100 });
 * const db = concurrencyLimit({ limit, maxQueue: 20, maxQueueWaitMs: 50 });
 */
export function gradientLimit(options?: GradientLimitOptions): AdaptiveLimit {
  const o = optionsObject('gradientLimit options', options);
  const bounds = limitBounds(o, { initialLimit: 20, minLimit: 20, maxLimit: 200 });
  const smoothing = numberInRange('smoothing', o.smoothing ?? 0.2, [0, 1]);
  if (smoothing === 0) throw new SpillwayConfigError('smoothing', 'a number above 0, up to 1', 0);
  const rttTolerance = o.rttTolerance ?? 1.5;
  if (typeof rttTolerance !== 'number' || !(rttTolerance >= 1) || rttTolerance === Infinity) {
    throw new SpillwayConfigError('rttTolerance', 'a finite number of 1 or more', rttTolerance);
  }
  const window = new SampleWindow(
    windowSettings(o),
    percentileOption(o.percentile, 0.9),
    timeoutOption(o.timeoutMs, 5_000),
  );
  return new Gradient({
    ...bounds,
    window,
    smoothing,
    rttTolerance,
    queueSize: nonNegativeNumber('queueSize', o.queueSize ?? 4),
    longWindow: positiveInteger('longWindow', o.longWindow ?? 600),
    backoffRatio: backoffRatioOption(o.backoffRatio),
  });
}

interface GradientSettings extends LimitBounds {
  readonly window: SampleWindow;
  readonly smoothing: number;
  readonly rttTolerance: number;
  readonly queueSize: number;
  readonly longWindow: number;
  readonly backoffRatio: number;
}

/** Windows averaged plainly before the exponential average takes over (Netflix's warm-up). */
const warmupWindows = 10;

/**
 * Share of the gap the long-term RTT closes per window when a window is faster than it: a
 * faster window proves the baseline too high. Gradient2 only decays it by 5 % per window once
 * it is 2× the present, which in simulation left the baseline ~1.6× too high after a 10× spell
 * and the recovered limit at ~2.4× capacity; at one half it recovers to where it was before.
 */
const fallRate = 0.5;

/** Congested windows in a row at `minLimit` after which the present RTT becomes the baseline. */
const pinnedWindowsBeforeRelearn = 10;

class Gradient extends LimitState implements AdaptiveLimit {
  readonly #s: GradientSettings;
  readonly #alpha: number;
  readonly #learnBand: number;
  #estimate: number;
  #longRtt = 0;
  #windows = 0;
  #pinnedWindows = 0;

  constructor(s: GradientSettings) {
    super(s.initialLimit);
    this.#s = s;
    this.#alpha = 2 / (s.longWindow + 1);
    this.#learnBand = 1 + (s.rttTolerance - 1) / 4;
    this.#estimate = s.initialLimit;
  }

  onSample(sample: LimitSample): void {
    const w = this.#s.window;
    if (w.add(sample)) this.#update(w.rttMs, w.inflight, w.dropped);
  }

  #learn(rtt: number): void {
    const n = ++this.#windows;
    if (n <= warmupWindows) this.#longRtt += (rtt - this.#longRtt) / n;
    else {
      // Rise slowly, fall fast: a window faster than the baseline proves the baseline too high.
      const rate = rtt < this.#longRtt ? fallRate : this.#alpha;
      this.#longRtt += (rtt - this.#longRtt) * rate;
    }
  }

  #update(shortRtt: number, inflight: number, dropped: boolean): void {
    const s = this.#s;
    const limit = this.#estimate;
    let next: number;
    if (shortRtt === shortRtt) {
      const appLimited = inflight * 2 < limit;
      const long = this.#longRtt;
      const warm = this.#windows > 0;
      // Learn from windows that show (next to) no queueing; at the equilibrium the limit seeks,
      // the RTT sits near tolerance × baseline by design, and learning from that would drift.
      if (!warm || appLimited || shortRtt <= this.#learnBand * long) this.#learn(shortRtt);
      if (!warm || appLimited || shortRtt <= s.rttTolerance * long || this.current > s.minLimit) {
        this.#pinnedWindows = 0;
      } else if (++this.#pinnedWindows >= pinnedWindowsBeforeRelearn) {
        // Shrinking to the floor did not bring the RTT back: the service itself got slower.
        this.#longRtt = shortRtt;
        this.#pinnedWindows = 0;
      }
      if (dropped) next = limit * s.backoffRatio;
      else if (appLimited) return;
      else {
        const ratio = (s.rttTolerance * this.#longRtt) / shortRtt;
        const gradient = ratio < 0.5 ? 0.5 : ratio > 1 ? 1 : ratio;
        next = (1 - s.smoothing) * limit + s.smoothing * (limit * gradient + s.queueSize);
      }
    } else if (dropped) next = limit * s.backoffRatio;
    else return;
    this.#estimate = Math.min(s.maxLimit, Math.max(s.minLimit, next));
    this.set(this.#estimate, shortRtt, dropped);
  }
}
