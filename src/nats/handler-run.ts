/**
 * One handler's run under its deadline: the context it is given (a signal made only if the
 * handler asks for it — an `AbortController` per message costs more than the rest of the
 * consumer's work) and the one timer that ends the run at the deadline. Internal.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../core/clock/clock.js';
import { DeadlineExceededError } from '../core/errors/rejected-error.js';
import type { MessageContext } from './permit-consumer-types.js';
import type { HandlerEnd } from './settle.js';

/** A running handler's context; `end` is told once how the run ended. */
export class HandlerRun implements MessageContext {
  readonly expiresAt: number;
  readonly #clock: Clock;
  readonly #end: (end: HandlerEnd) => void;
  #timer: TimerHandle | undefined;
  #controller: AbortController | undefined;
  #expired: DeadlineExceededError | undefined;
  #settled = false;

  constructor(clock: Clock, expiresAt: number, end: (end: HandlerEnd) => void) {
    this.#clock = clock;
    this.expiresAt = expiresAt;
    this.#end = end;
    this.#timer = clock.setTimer(expiresAt - clock.now(), () => this.#expire(), { unref: true });
  }

  /** Aborts at the deadline (reason: `DeadlineExceededError`). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#expired !== undefined) this.#controller.abort(this.#expired);
    }
    return this.#controller.signal;
  }

  /** Runs `work`, ending the run with its outcome unless the deadline came first. */
  run(work: () => unknown): void {
    new Promise((resolve) => resolve(work())).then(
      () => this.#finish({ ok: true }),
      (error: unknown) => this.#finish({ ok: false, error, expired: this.#expired !== undefined }),
    );
  }

  #expire(): void {
    this.#timer = undefined;
    this.#expired = new DeadlineExceededError();
    this.#controller?.abort(this.#expired);
    this.#finish({ ok: false, error: this.#expired, expired: true });
  }

  #finish(end: HandlerEnd): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#end(end);
  }
}
