/**
 * Additive increase, multiplicative decrease (Netflix `AIMDLimit`): a loss-based limit. Each
 * window that saw a drop or a timeout multiplies the limit by `backoffRatio`; each clean window
 * in which the work used at least half the limit adds one. It never looks at how RTTs move, so
 * it suits dependencies that fail loudly (timeouts, 503s) rather than slowly.
 *
 * @module
 */
import { SpillwayConfigError } from '../errors/config-error.js';
import type { LimitSample } from '../concurrency-limit/limit-source.js';
import { numberInRange, optionsObject } from '../internal/validate.js';
import {
  LimitState,
  limitBounds,
  type AdaptiveLimit,
  type LimitBounds,
  type LimitBoundsOptions,
} from './adaptive-limit.js';
import {
  SampleWindow,
  timeoutOption,
  windowSettings,
  type WindowOptions,
} from './sample-window.js';

/** Options of {@link aimdLimit}. Defaults are Netflix's, so configurations port as they are. */
export interface AimdLimitOptions extends LimitBoundsOptions, WindowOptions {
  /** @default 20 */
  readonly initialLimit?: number;
  /** @default 20 */
  readonly minLimit?: number;
  /** @default 200 */
  readonly maxLimit?: number;
  /** Factor applied on a window with a drop or a timeout, in [0.5, 1). @default 0.9 */
  readonly backoffRatio?: number;
  /** A sample slower than this many ms counts as a drop. `Infinity` disables it. @default 5_000 */
  readonly timeoutMs?: number;
}

/** Validates a `backoffRatio` option: [0.5, 1), as Netflix requires. */
export function backoffRatioOption(value: unknown): number {
  const ratio = numberInRange('backoffRatio', value ?? 0.9, [0.5, 1]);
  if (ratio === 1) throw new SpillwayConfigError('backoffRatio', 'a number from 0.5 to below 1', 1);
  return ratio;
}

/**
 * Creates an AIMD limit.
 *
 * @example
 * const limit = aimdLimit({ minLimit: 5, maxLimit: 100 });
 * const db = concurrencyLimit({ limit });
 * // release permits with 'dropped' when the work timed out or the dependency refused
 */
export function aimdLimit(options?: AimdLimitOptions): AdaptiveLimit {
  const o = optionsObject('aimdLimit options', options);
  const bounds = limitBounds(o, { initialLimit: 20, minLimit: 20, maxLimit: 200 });
  const window = new SampleWindow(windowSettings(o), 0, timeoutOption(o.timeoutMs, 5_000));
  return new Aimd({ ...bounds, window, backoffRatio: backoffRatioOption(o.backoffRatio) });
}

interface AimdSettings extends LimitBounds {
  readonly window: SampleWindow;
  readonly backoffRatio: number;
}

class Aimd extends LimitState implements AdaptiveLimit {
  readonly #min: number;
  readonly #max: number;
  readonly #window: SampleWindow;
  readonly #backoffRatio: number;

  constructor(s: AimdSettings) {
    super(s.initialLimit);
    this.#min = s.minLimit;
    this.#max = s.maxLimit;
    this.#window = s.window;
    this.#backoffRatio = s.backoffRatio;
  }

  onSample(sample: LimitSample): void {
    const w = this.#window;
    if (!w.add(sample)) return;
    const limit = this.current;
    let next = limit;
    if (w.dropped) next = Math.floor(limit * this.#backoffRatio);
    else if (w.inflight * 2 >= limit) next = limit + 1;
    this.set(Math.min(this.#max, Math.max(this.#min, next)), w.rttMs, w.dropped);
  }
}
