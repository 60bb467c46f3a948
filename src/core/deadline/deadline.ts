/**
 * Deadlines that cancel the work, not only the wait. A {@link Deadline} is an absolute time on
 * the Clock plus one `AbortSignal` that fires at that time or when the caller's signal fires,
 * whichever comes first. `dispose()` removes the timer and the listener, so millions of
 * deadlines leave nothing behind.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { DeadlineExceededError } from '../errors/rejected-error.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { clockLike, nonNegativeNumber, optionsObject } from '../internal/validate.js';

/** Options of {@link deadline}. Give `timeoutMs`, `expiresAt`, or both (the earlier wins). */
export interface DeadlineOptions {
  /** Milliseconds from now. */
  readonly timeoutMs?: number;
  /** Absolute time on `clock` (as returned by `clock.now()`). */
  readonly expiresAt?: number;
  /** The caller's signal; aborting it aborts the deadline's signal with the same reason. */
  readonly signal?: AbortSignal | undefined;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** An absolute deadline with the signal to pass down to the work. */
export interface Deadline extends Disposable {
  /** Absolute expiry on the clock; `Infinity` when only a caller's signal bounds the work. */
  readonly expiresAt: number;
  /** Aborts at `expiresAt` (reason: `DeadlineExceededError`) or with the caller's signal. */
  readonly signal: AbortSignal;
  /** Milliseconds left, never negative. */
  remainingMs(): number;
  /** True once the signal aborted, for whatever reason. */
  readonly aborted: boolean;
  /** Removes the timer and the listener on the caller's signal. Idempotent. */
  dispose(): void;
}

/**
 * Creates a deadline.
 *
 * @example
 * const d = deadline({ timeoutMs: 1_000, signal: req.signal });
 * try { await query(sql, { signal: d.signal }); } finally { d.dispose(); }
 */
export function deadline(options: DeadlineOptions): Deadline {
  const o = optionsObject('deadline options', options);
  const clock = clockLike('clock', o.clock ?? systemClock);
  const now = clock.now();
  let expiresAt = Infinity;
  if (o.timeoutMs !== undefined) expiresAt = now + nonNegativeNumber('timeoutMs', o.timeoutMs);
  if (o.expiresAt !== undefined) {
    if (typeof o.expiresAt !== 'number' || Number.isNaN(o.expiresAt)) {
      throw new SpillwayConfigError('expiresAt', 'a time on the clock (a number)', o.expiresAt);
    }
    expiresAt = Math.min(expiresAt, o.expiresAt);
  }
  const parent = o.signal;
  if (parent !== undefined && !(parent instanceof AbortSignal)) {
    throw new SpillwayConfigError('signal', 'an AbortSignal', parent);
  }
  return new LinkedDeadline(clock, expiresAt).start(now, parent);
}

class LinkedDeadline implements Deadline {
  readonly expiresAt: number;
  readonly signal: AbortSignal;
  readonly #clock: Clock;
  readonly #controller = new AbortController();
  #parent: AbortSignal | undefined;
  #timer: TimerHandle | undefined;

  constructor(clock: Clock, expiresAt: number) {
    this.#clock = clock;
    this.expiresAt = expiresAt;
    this.signal = this.#controller.signal;
  }

  /** Arms the timer and the parent listener, or aborts at once if either already fired. */
  start(now: number, parent: AbortSignal | undefined): this {
    const expiresAt = this.expiresAt;
    if (parent?.aborted === true) {
      this.#controller.abort(parent.reason);
    } else if (expiresAt <= now) {
      this.#controller.abort(new DeadlineExceededError());
    } else {
      if (parent !== undefined) {
        this.#parent = parent;
        parent.addEventListener('abort', this, { once: true });
      }
      if (expiresAt !== Infinity) {
        this.#timer = this.#clock.setTimer(expiresAt - now, () => this.#expire(), { unref: true });
      }
    }
    return this;
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  remainingMs(): number {
    if (this.signal.aborted) return 0;
    const left = this.expiresAt - this.#clock.now();
    return left > 0 ? left : 0;
  }

  /** The parent signal aborted (this object is its listener, so no closure is allocated). */
  handleEvent(): void {
    const reason: unknown = this.#parent?.reason;
    this.#parent = undefined;
    this.dispose();
    this.#controller.abort(reason);
  }

  #expire(): void {
    this.#timer = undefined;
    this.dispose();
    this.#controller.abort(new DeadlineExceededError());
  }

  dispose(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimer(this.#timer);
      this.#timer = undefined;
    }
    if (this.#parent !== undefined) {
      this.#parent.removeEventListener('abort', this);
      this.#parent = undefined;
    }
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
