/**
 * The abort wiring of one attempt: a timer on the Clock that aborts the request when the
 * attempt's time is up (the caller's deadline, or `timeoutMs`), joined with the caller's own
 * signals. The timer goes as soon as the attempt settles; the caller's signals stay attached to
 * the request through `AbortSignal.any`, which holds them weakly, so a response body read later
 * still stops when the caller gives up, and nothing accumulates on a long-lived caller signal.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../index.js';

/** Why an attempt's own timer fired. */
export type AttemptEnd = 'deadline' | 'timeout';

export class AttemptScope {
  /** The signal for the attempt's work; undefined when nothing could ever abort it. */
  readonly signal: AbortSignal | undefined;
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  #fired: unknown;

  constructor(p: {
    readonly clock: Clock;
    readonly callerSignal: AbortSignal | undefined;
    /** Ms until this attempt's time is up; Infinity for none. */
    readonly timerMs: number;
    /** The reason the work is aborted with when the timer fires. */
    readonly reason: () => unknown;
  }) {
    this.#clock = p.clock;
    if (p.timerMs === Infinity) {
      this.signal = p.callerSignal;
      return;
    }
    const controller = new AbortController();
    this.#timer = p.clock.setTimer(
      p.timerMs,
      () => {
        this.#timer = undefined;
        this.#fired = p.reason();
        controller.abort(this.#fired);
      },
      { unref: true },
    );
    this.signal =
      p.callerSignal === undefined
        ? controller.signal
        : AbortSignal.any([p.callerSignal, controller.signal]);
  }

  /** The error the timer aborted the work with, if it fired. */
  get fired(): unknown {
    return this.#fired;
  }

  /** Clears the timer. Idempotent. */
  dispose(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimer(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** One signal standing for all of `signals` (undefined when there are none). */
export function joinSignals(
  signals: readonly (AbortSignal | undefined)[],
): AbortSignal | undefined {
  let only: AbortSignal | undefined;
  let count = 0;
  for (const s of signals) {
    if (s === undefined || s === only) continue;
    only = s;
    count++;
  }
  if (count <= 1) return only;
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}
