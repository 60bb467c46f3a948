/**
 * What the adaptive limits (`aimdLimit`, `vegasLimit`, `gradientLimit`) have in common: they
 * are fed finished work as samples, close a measurement window now and then, and move
 * `current` within [`minLimit`, `maxLimit`]. Pass one as `concurrencyLimit({ limit })` and the
 * limiter feeds it; or call `onSample` yourself from any other admission point.
 *
 * @module
 */
import { SpillwayConfigError } from '../errors/config-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import type { LimitSample, LimitSource } from '../concurrency-limit/limit-source.js';
import { positiveInteger } from '../internal/validate.js';

/** Emitted when the whole-number limit changes. */
export interface LimitChangeEvent {
  readonly limit: number;
  readonly previous: number;
  /** The window RTT (the algorithm's percentile) that led to the change; NaN if it had none. */
  readonly rttMs: number;
  /** Whether the window that led to the change saw a drop or a timeout. */
  readonly dropped: boolean;
}

/** A concurrency limit that learns from the work it admits. */
export interface AdaptiveLimit extends LimitSource {
  /** The limit now: a whole number within [`minLimit`, `maxLimit`]. */
  readonly current: number;
  /** Feeds one finished unit of work. Cheap: the algorithm runs once per window. */
  onSample(sample: LimitSample): void;
  /** Subscribes to changes of `current`. */
  readonly onChange: Event<LimitChangeEvent>;
}

/** Bounds every adaptive limit takes. */
export interface LimitBoundsOptions {
  /** Where the limit starts. */
  readonly initialLimit?: number;
  /** The limit never goes below this. */
  readonly minLimit?: number;
  /** The limit never goes above this. */
  readonly maxLimit?: number;
}

/** Validated bounds. */
export interface LimitBounds {
  readonly initialLimit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
}

/** Validates the bounds: positive integers with minLimit ≤ initialLimit ≤ maxLimit. */
export function limitBounds(o: LimitBoundsOptions, defaults: LimitBounds): LimitBounds {
  const minLimit = positiveInteger('minLimit', o.minLimit ?? defaults.minLimit);
  const maxLimit = positiveInteger('maxLimit', o.maxLimit ?? defaults.maxLimit);
  if (maxLimit < minLimit) {
    throw new SpillwayConfigError('maxLimit', `at least minLimit (${minLimit})`, maxLimit);
  }
  // An unset initial limit follows the bounds the user chose (Netflix's 20 may lie outside).
  const initial = o.initialLimit ?? Math.min(maxLimit, Math.max(minLimit, defaults.initialLimit));
  const initialLimit = positiveInteger('initialLimit', initial);
  if (initialLimit < minLimit || initialLimit > maxLimit) {
    throw new SpillwayConfigError(
      'initialLimit',
      `an integer from minLimit (${minLimit}) to maxLimit (${maxLimit})`,
      initialLimit,
    );
  }
  return { initialLimit, minLimit, maxLimit };
}

/** The part every algorithm shares: the whole-number limit and its change event. */
export class LimitState {
  readonly #changed = new Emitter<LimitChangeEvent>();
  readonly onChange = this.#changed.event;
  /** The whole-number limit that limiters read. */
  current: number;

  constructor(initial: number) {
    this.current = initial;
  }

  /** Publishes a new estimate; emits only when the whole number moves. */
  set(estimate: number, rttMs: number, dropped: boolean): void {
    const next = Math.floor(estimate);
    const previous = this.current;
    if (next === previous) return;
    this.current = next;
    if (this.#changed.size > 0) this.#changed.emit({ limit: next, previous, rttMs, dropped });
  }
}
