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

/** Several caller signals joined into one, and how to take the join apart. */
export interface JoinedSignals {
  readonly signal: AbortSignal;
  /** Removes the listeners the join added, when there are any; idempotent. */
  readonly unlink: (() => void) | undefined;
}

/**
 * One signal standing for all the given ones (undefined when there are none). One signal is
 * itself. Several are joined by listeners on each, removed by `unlink` when the call settles:
 * `AbortSignal.any` would keep every call's joined signal reachable from a long-lived source
 * on Node 20, so a process-wide signal joined on every call grows the heap without bound.
 */
export function joinSignals(
  ...signals: readonly (AbortSignal | undefined)[]
): JoinedSignals | undefined {
  let only: AbortSignal | undefined;
  let count = 0;
  for (const s of signals) {
    if (s === undefined || s === only) continue;
    only = s;
    count++;
  }
  if (only === undefined) return undefined;
  if (count === 1) return { signal: only, unlink: undefined };
  return new SignalJoin(signals);
}

/** The listener on every joined source: aborts the joined signal with the first reason. */
class SignalJoin implements JoinedSignals {
  readonly #controller = new AbortController();
  readonly #sources: AbortSignal[] = [];

  constructor(signals: readonly (AbortSignal | undefined)[]) {
    for (const s of signals) {
      if (s === undefined || this.#sources.includes(s)) continue;
      if (s.aborted) {
        this.#controller.abort(s.reason);
        this.unlink();
        return;
      }
      this.#sources.push(s);
      s.addEventListener('abort', this);
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  handleEvent(event: Event): void {
    this.#controller.abort((event.target as AbortSignal).reason);
    this.unlink();
  }

  readonly unlink = (): void => {
    const sources = this.#sources;
    for (const s of sources) s.removeEventListener('abort', this);
    sources.length = 0;
  };
}
