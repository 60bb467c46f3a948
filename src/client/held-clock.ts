/**
 * The dependency's clock as the breaker and throttle it builds see it: a clock that can be held
 * at one reading while an attempt's outcome is recorded, so the breaker's window and the
 * throttle's accept share one reading instead of taking one each. On Node 20 a
 * `performance.now()` costs ~150 instructions (its brand check, then libuv), about 5 % of what
 * a default `dependency.fetch` adds to a fetch. Outside a hold (and for a breaker or throttle
 * the user passes in, which keep their own clocks) every read is fresh.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../index.js';

export class HeldClock implements Clock {
  readonly #clock: Clock;
  #holding = false;
  // The reading held, once something read it; NaN before.
  #held = Number.NaN;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  now(): number {
    if (!this.#holding) return this.#clock.now();
    let held = this.#held;
    // NaN is the only value not equal to itself: nothing has read the clock in this hold yet.
    if (held !== held) held = this.#held = this.#clock.now();
    return held;
  }

  /**
   * From now until `release()`, every `now()` answers the same reading: the first one made
   * (when nothing reads, the clock is not read at all).
   */
  hold(): void {
    this.#holding = true;
    this.#held = Number.NaN;
  }

  release(): void {
    this.#holding = false;
  }

  wallNow(): number {
    return this.#clock.wallNow();
  }

  setTimer(ms: number, fn: () => void, options?: { readonly unref?: boolean }): TimerHandle {
    return this.#clock.setTimer(ms, fn, options);
  }

  clearTimer(handle: TimerHandle): void {
    this.#clock.clearTimer(handle);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.#clock.sleep(ms, signal);
  }

  timeoutSignal(ms: number): AbortSignal {
    return this.#clock.timeoutSignal(ms);
  }
}
