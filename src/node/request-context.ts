/**
 * What an admitted request carries into its handler: one `AbortSignal` that fires on client
 * disconnect, on the request's deadline, or at the server's own maximum; the deadline itself
 * (to pass on to dependencies); and the criticality, attempt and client key Spillway decided
 * on. The permit is held until {@link Admitted.finish} — when the handler's work has settled.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DeadlineExceededError,
  type Clock,
  type Criticality,
  type Permit,
  type PermitOutcome,
  type TimerHandle,
} from '../index.js';

/** Passed to handlers: the signal to hand down to the work, and the request's budget. */
export interface RequestContext {
  /** Aborts on client disconnect, on the deadline, or at the server's maximum. */
  readonly signal: AbortSignal;
  /** Absolute deadline on `clock` (what `spillway/client` propagates downstream). */
  readonly expiresAt: number;
  /** Milliseconds left before the deadline, never negative. */
  remainingMs(): number;
  /** The criticality admission used (the client's claim, capped by the route's ceiling). */
  readonly criticality: Criticality;
  /** `Spillway-Attempt` of the request (1 = first try). */
  readonly attempt: number;
  /** The client key quotas and penalties were counted against. */
  readonly key: string;
  /** The route's name. */
  readonly route: string;
  /** The guard's clock. */
  readonly clock: Clock;
}

/** Why the signal aborted when the client went away. */
export class ClientDisconnectedError extends Error {
  override readonly name = 'AbortError';
  constructor() {
    super('The client disconnected before the response was complete');
  }
}

/** Fields needed to start a context. */
export interface ContextInit {
  readonly clock: Clock;
  readonly expiresAt: number;
  readonly criticality: Criticality;
  readonly attempt: number;
  readonly key: string;
  readonly route: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** When the request arrived, on `clock`. */
  readonly startedAt: number;
  /** Told once when the request finishes (the guard's in-flight count and load signals). */
  readonly onFinish?: ((context: Admitted, outcome: PermitOutcome) => void) | undefined;
}

/** A live admitted request: the context, plus the lifecycle the adapters drive. */
export class Admitted implements RequestContext {
  readonly expiresAt: number;
  readonly criticality: Criticality;
  readonly attempt: number;
  readonly key: string;
  readonly route: string;
  readonly clock: Clock;
  /** When the request arrived, on `clock`. */
  readonly startedAt: number;
  readonly #onFinish: ((context: Admitted, outcome: PermitOutcome) => void) | undefined;
  /** The request (adapters need it back when they run the handler). */
  readonly req: IncomingMessage;
  readonly #controller: AbortController;
  readonly #res: ServerResponse;
  #permit: Permit | undefined;
  #timer: TimerHandle | undefined;
  #finished = false;

  constructor(init: ContextInit, controller?: AbortController) {
    this.clock = init.clock;
    this.expiresAt = init.expiresAt;
    this.criticality = init.criticality;
    this.attempt = init.attempt;
    this.key = init.key;
    this.route = init.route;
    this.req = init.req;
    this.startedAt = init.startedAt;
    this.#onFinish = init.onFinish;
    this.#res = init.res;
    this.#controller = controller ?? new AbortController();
  }

  /** The response. */
  get res(): ServerResponse {
    return this.#res;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** An arrow property, so `const { remainingMs } = context` works. */
  readonly remainingMs = (): number => {
    const left = this.expiresAt - this.clock.now();
    return left > 0 ? left : 0;
  };

  /** Arms the deadline timer and the disconnect listener; the permit is held from now on. */
  start(permit: Permit | undefined): this {
    this.#permit = permit;
    const left = this.expiresAt - this.clock.now();
    this.#timer = this.clock.setTimer(left > 0 ? left : 0, () => this.#expire());
    this.#res.once('close', this.#onClose);
    return this;
  }

  /**
   * Releases the permit and detaches; idempotent. Call when the handler's work has settled;
   * `outcome` tells an adaptive limit how it ended (`dropped` for overload or deadline).
   */
  finish(outcome: PermitOutcome = 'ok'): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#timer !== undefined) {
      this.clock.clearTimer(this.#timer);
      this.#timer = undefined;
    }
    this.#res.removeListener('close', this.#onClose);
    const permit = this.#permit;
    this.#permit = undefined;
    permit?.release(outcome);
    this.#onFinish?.(this, outcome);
  }

  /** True once {@link Admitted.finish} ran. */
  get finished(): boolean {
    return this.#finished;
  }

  readonly #onClose = (): void => {
    if (!this.#res.writableFinished) this.#controller.abort(new ClientDisconnectedError());
  };

  #expire(): void {
    this.#timer = undefined;
    this.#controller.abort(new DeadlineExceededError());
  }
}
