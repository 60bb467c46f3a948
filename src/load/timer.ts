/**
 * The generator's one way to arm a timer. Node's `setTimeout` takes at most 2^31 − 1 ms; a
 * longer delay (a `Retry-After` of years, a huge option) fires after 1 ms instead, and code that
 * re-arms until its time has come then spins every millisecond. Every timer in `src/load` goes
 * through here, so no delay, whoever chose it, can do that.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';

/** The longest delay a Node timer waits, in ms (about 24.8 days). */
export const maxTimerDelayMs = 2 ** 31 - 1;

/** `delayMs` clamped to what a timer can wait: [0, {@link maxTimerDelayMs}]; NaN → 0. */
export function timerDelayMs(delayMs: number): number {
  if (!(delayMs > 0)) return 0;
  return delayMs < maxTimerDelayMs ? delayMs : maxTimerDelayMs;
}

/**
 * `setTimeout` with the delay clamped (see {@link timerDelayMs}). A timer clamped short fires
 * early: callers that must not act early check their own clock and re-arm, as they already do
 * for Node's millisecond rounding.
 */
export function armTimer<A extends unknown[]>(
  callback: (...args: A) => void,
  delayMs: number,
  ...args: A
): NodeJS.Timeout {
  return setTimeout(callback, timerDelayMs(delayMs), ...args);
}

/**
 * A time that becomes (part of) one timer's delay: at most what a timer can wait, so no option
 * can make a timer fire at once and spin (see `timer.ts`).
 */
export function timerMs(option: string, ms: number): number {
  if (ms > maxTimerDelayMs) {
    throw new SpillwayConfigError(
      option,
      `at most ${maxTimerDelayMs} ms (about 24.8 days, the longest a timer waits)`,
      ms,
    );
  }
  return ms;
}
