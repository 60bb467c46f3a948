/**
 * The abort wiring of one attempt: a timer on the Clock that aborts the attempt when its time
 * is up (the caller's deadline, or `timeoutMs`), linked to the caller's signal. Built to cost
 * nothing it does not need, because creating an `AbortSignal` costs microseconds on Node 20
 * and `AbortSignal.any` tens of them:
 * - nothing bounds the attempt: no signal at all;
 * - only the caller's signal does: that very signal is passed to the work (so it also stops a
 *   response body read later);
 * - a timer is needed: one `AbortController`, made only when the work asks for the signal,
 *   linked to the caller's signal by a listener (this object) that is removed, with the timer,
 *   as soon as the attempt settles.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../index.js';

export class AttemptScope {
  readonly #clock: Clock;
  readonly #caller: AbortSignal | undefined;
  readonly #timed: boolean;
  #timer: TimerHandle | undefined;
  #controller: AbortController | undefined;
  #linked = false;
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
    this.#caller = p.callerSignal;
    this.#timed = p.timerMs !== Infinity;
    if (!this.#timed) return;
    this.#timer = p.clock.setTimer(
      p.timerMs,
      () => {
        this.#timer = undefined;
        this.#fired = p.reason();
        this.#unlink();
        this.#controller?.abort(this.#fired);
      },
      { unref: true },
    );
  }

  /** The signal for the attempt's work (made on first use); undefined when nothing bounds it. */
  get signal(): AbortSignal | undefined {
    if (!this.#timed) return this.#caller;
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      const caller = this.#caller;
      if (this.#fired !== undefined) controller.abort(this.#fired);
      else if (caller?.aborted === true) controller.abort(caller.reason);
      else if (caller !== undefined && this.#timer !== undefined) {
        caller.addEventListener('abort', this, { once: true });
        this.#linked = true;
      }
    }
    return this.#controller.signal;
  }

  /** The error the timer aborted the work with, if it fired. */
  get fired(): unknown {
    return this.#fired;
  }

  /** The caller's signal aborted (this object is its listener: no closure per attempt). */
  handleEvent(): void {
    this.#linked = false;
    this.#controller?.abort(this.#caller?.reason);
  }

  /** Clears the timer and the link to the caller's signal. Idempotent. */
  dispose(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimer(this.#timer);
      this.#timer = undefined;
    }
    this.#unlink();
  }

  #unlink(): void {
    if (this.#linked) {
      this.#linked = false;
      this.#caller?.removeEventListener('abort', this);
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
  // Rare (several distinct caller signals) and costly on Node 20, but weakly held: fine per call.
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}
