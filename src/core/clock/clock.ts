/**
 * The one place where Spillway reads time and sets timers. Everything in `core` takes a
 * {@link Clock} so tests can run on a virtual clock (see `spillway/testing`) and never sleep.
 *
 * @module
 */

/** An opaque handle returned by {@link Clock.setTimer}; pass it to {@link Clock.clearTimer}. */
export type TimerHandle = object;

/** Where time comes from. Inject it; never read globals in code that has a clock. */
export interface Clock {
  /** Monotonic milliseconds (fractional). Only differences between two readings mean anything. */
  now(): number;
  /** Wall-clock epoch milliseconds. Only for HTTP dates and persisted state, never for durations. */
  wallNow(): number;
  /**
   * Runs `fn` once after `ms` milliseconds. `unref: true` lets the process exit while the timer
   * is pending (use it for background sweepers, never for timers somebody awaits).
   */
  setTimer(ms: number, fn: () => void, options?: { readonly unref?: boolean }): TimerHandle;
  /** Cancels a timer set by {@link Clock.setTimer}. Cancelling twice, or after it fired, is a no-op. */
  clearTimer(handle: TimerHandle): void;
  /** Resolves after `ms`; rejects with `signal.reason` as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A signal that aborts with a `TimeoutError` after `ms` (the Clock's `AbortSignal.timeout`). */
  timeoutSignal(ms: number): AbortSignal;
}

/** Node's `setTimeout` rejects delays above 2^31-1 ms by firing at once; clamp instead. */
const maxTimerMs = 2_147_483_647;

/**
 * Whole milliseconds, rounded up (never early). Node's timers fire on a 1 ms tick anyway, but
 * keep one list per distinct delay: a deadline's remaining 999.73 ms would get a list of its
 * own — a heap insert and removal per request — where whole delays share one.
 */
function clampDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return ms > maxTimerMs ? maxTimerMs : Math.ceil(ms);
}

const perf = globalThis.performance;

/** The real clock: `performance.now()`, `Date.now()` and Node's timers. */
export const systemClock: Clock = Object.freeze({
  now: () => perf.now(),
  wallNow: () => Date.now(),
  setTimer(ms: number, fn: () => void, options?: { readonly unref?: boolean }): TimerHandle {
    const timer = setTimeout(fn, clampDelay(ms));
    if (options?.unref === true) timer.unref();
    return timer;
  },
  clearTimer(handle: TimerHandle): void {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(systemClock, ms, signal);
  },
  timeoutSignal(ms: number): AbortSignal {
    return timeoutSignalOn(systemClock, ms);
  },
});

/**
 * `sleep` written once against any clock's `setTimer`, so the system and virtual clocks share
 * the same listener hygiene: the abort listener is removed when the timer fires, and the timer is
 * cleared when the signal aborts.
 */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
  return new Promise<void>((resolve, reject) => {
    const due = clock.now() + ms;
    const onAbort = (): void => {
      clock.clearTimer(handle);
      reject(signal?.reason as Error);
    };
    const wake = (): void => {
      // Node's timers count whole milliseconds of the event loop's time and may fire up to
      // 1 ms before `ms` has passed on the clock: a sleep (a wait for Retry-After, say) never
      // ends early.
      const left = due - clock.now();
      if (left > 0 && Number.isFinite(left)) {
        handle = clock.setTimer(left, wake);
        return;
      }
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    let handle = clock.setTimer(ms, wake);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `AbortSignal.timeout` on any clock; the reason is a `TimeoutError` DOMException, as in Node. */
export function timeoutSignalOn(clock: Clock, ms: number): AbortSignal {
  const controller = new AbortController();
  clock.setTimer(
    ms,
    () => {
      controller.abort(
        new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      );
    },
    { unref: true },
  );
  return controller.signal;
}
