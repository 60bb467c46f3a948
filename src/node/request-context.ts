/**
 * What an admitted request carries into its handler: one `AbortSignal` that fires on client
 * disconnect, on the request's deadline, or at the server's own maximum; the deadline itself
 * (to pass on to dependencies); and the criticality, attempt and client key Spillway decided
 * on. The permit is held until {@link Admitted.finish} — when the handler's work has settled.
 *
 * The context also knows which of the three stopped the work, because only one of them says
 * anything about this server's capacity: the route's own maximum passing is a drop for an
 * adaptive limit; a shorter deadline the client asked for, or the client leaving, is the
 * client's choice and counts for nothing (else one client could shrink a limit all share).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusalFromError } from '../http/index.js';
import {
  DeadlineExceededError,
  type AmbientContext,
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

/**
 * What aborted an admitted request's signal: the route's own maximum (`deadlineMs`), a shorter
 * deadline the client asked for (`Spillway-Deadline`), or the client going away.
 */
export type AbortCause = 'route-deadline' | 'client-deadline' | 'disconnect';

/** Fields needed to start a context. */
export interface ContextInit {
  readonly clock: Clock;
  /** The deadline in force: the client's, if it asked for less than the route's maximum. */
  readonly expiresAt: number;
  /** The route's own maximum (`deadlineMs` after arrival), on `clock`. @default expiresAt */
  readonly routeExpiresAt?: number;
  readonly criticality: Criticality;
  readonly attempt: number;
  readonly key: string;
  readonly route: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** When the request arrived, on `clock`. */
  readonly startedAt: number;
  /** Whether the key may go on the diagnostics channels (the guard's `publishKey`). @default false */
  readonly publishKey?: boolean;
  /** Told once when the request finishes (the guard's in-flight count and load signals). */
  readonly onFinish?: ((context: Admitted, outcome: PermitOutcome) => void) | undefined;
}

/** A live admitted request: the context, plus the lifecycle the adapters drive. */
export class Admitted implements RequestContext {
  readonly expiresAt: number;
  /** The route's own maximum on `clock`; `expiresAt` is earlier when the client asked for less. */
  readonly routeExpiresAt: number;
  readonly criticality: Criticality;
  readonly attempt: number;
  readonly key: string;
  readonly route: string;
  readonly clock: Clock;
  /** When the request arrived, on `clock`. */
  readonly startedAt: number;
  /** Whether the key may go on the diagnostics channels (the guard's `publishKey`). */
  readonly publishKey: boolean;
  /**
   * The `seq` its `admitted` message was published with (0 while none was), for its release's
   * message. Set by the guard's checks. @internal
   */
  admissionSeq = 0;
  readonly #onFinish: ((context: Admitted, outcome: PermitOutcome) => void) | undefined;
  /** The request (adapters need it back when they run the handler). */
  readonly req: IncomingMessage;
  readonly #controller: AbortController;
  readonly #res: ServerResponse;
  #permit: Permit | undefined;
  #timer: TimerHandle | undefined;
  #finished = false;
  #cause: AbortCause | undefined;
  #grantedAt = Number.NaN;

  constructor(init: ContextInit) {
    this.clock = init.clock;
    this.expiresAt = init.expiresAt;
    this.routeExpiresAt = init.routeExpiresAt ?? init.expiresAt;
    this.criticality = init.criticality;
    this.attempt = init.attempt;
    this.key = init.key;
    this.route = init.route;
    this.req = init.req;
    this.startedAt = init.startedAt;
    this.publishKey = init.publishKey === true;
    this.#onFinish = init.onFinish;
    this.#res = init.res;
    this.#controller = new AbortController();
  }

  /**
   * This request's ambient context (what `currentContext()` returns inside its handler): a small
   * object of its own that holds neither the request nor its socket, since a timer the handler
   * leaves behind keeps it alive. Its signal is read through the controller when asked for, not
   * copied: on Node 20 a controller's signal is made when first read, and costs ~3.5 µs.
   * @internal
   */
  ambient(): AmbientContext {
    return new AmbientOfRequest(this, this.#controller);
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

  /**
   * Arms the deadline timer and the disconnect listener; the permit is held from now on. A
   * client that left before this (during an asynchronous quota decision, say) has no `close`
   * event still to come: its signal aborts at once.
   */
  start(permit: Permit | undefined): this {
    this.#permit = permit;
    const now = this.clock.now();
    this.#grantedAt = now;
    const left = this.expiresAt - now;
    this.#timer = this.clock.setTimer(left > 0 ? left : 0, () => this.#expire());
    if (clientGone(this.#res)) this.#onClose();
    else this.#res.once('close', this.#onClose);
    return this;
  }

  /** When the request was let through (its slot granted), on `clock`; NaN before `start`. */
  get grantedAt(): number {
    return this.#grantedAt;
  }

  /** What aborted the signal, or undefined while it has not aborted. */
  get abortCause(): AbortCause | undefined {
    return this.#cause;
  }

  /**
   * Finishes once the handler's work has settled, telling an adaptive limit what that says
   * about this server: `failure` holds what the work threw, if it threw. See
   * {@link Admitted.outcomeOf}.
   */
  settle(failure?: { readonly error: unknown }): void {
    this.finish(this.outcomeOf(failure));
  }

  /**
   * How the work ended, for an adaptive limit. Only what this server's load explains counts:
   * - the route's own maximum passed → `dropped`;
   * - the client's shorter deadline passed, or the client left → `ignored`, whatever the work
   *   did then (a dependency refusing for want of the time the client allowed included);
   * - otherwise: settled → `ok`; failed with an overload or deadline signal from downstream
   *   (`refusalFromError`) → `dropped`, unless it was a deadline the client chose; any other
   *   failure (a bug, bad input) → `ignored`.
   */
  outcomeOf(failure?: { readonly error: unknown }): PermitOutcome {
    const cause = this.#cause;
    if (cause !== undefined) return cause === 'route-deadline' ? 'dropped' : 'ignored';
    if (failure === undefined) return 'ok';
    const refusal = refusalFromError(failure.error);
    if (refusal === undefined) return 'ignored';
    if (
      this.expiresAt < this.routeExpiresAt &&
      (refusal.reason === 'deadline' || this.clock.now() >= this.expiresAt)
    ) {
      // A dependency's timer on the client's deadline can fire before ours does.
      return 'ignored';
    }
    return 'dropped';
  }

  /**
   * Releases the permit and detaches; idempotent. Call when the handler's work has settled;
   * `outcome` tells an adaptive limit how it ended (`dropped` for overload or the route's own
   * deadline; {@link Admitted.settle} works it out).
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
    if (this.#res.writableFinished || this.#controller.signal.aborted) return;
    this.#cause = 'disconnect';
    this.#controller.abort(new ClientDisconnectedError());
  };

  #expire(): void {
    this.#timer = undefined;
    if (this.#controller.signal.aborted) return;
    this.#cause = this.expiresAt < this.routeExpiresAt ? 'client-deadline' : 'route-deadline';
    this.#controller.abort(new DeadlineExceededError());
  }
}

/**
 * An admitted request's ambient context. A class, so that the signal's getter lives on the
 * prototype: an object literal with a getter costs a closure and a slow-path literal per request.
 */
class AmbientOfRequest implements AmbientContext {
  readonly expiresAt: number;
  readonly clock: Clock;
  readonly criticality: Criticality;
  readonly attempt: number;
  readonly #controller: AbortController;

  constructor(context: Admitted, controller: AbortController) {
    this.expiresAt = context.expiresAt;
    this.clock = context.clock;
    this.criticality = context.criticality;
    this.attempt = context.attempt;
    this.#controller = controller;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }
}

/** Whether the client of `res` has gone before the response was complete. */
export function clientGone(res: ServerResponse): boolean {
  return !res.writableFinished && (res.destroyed || res.closed || res.socket?.destroyed === true);
}

const neverAborted = new AbortController().signal;

/** Exempt routes get a context too (no limits, no deadline), so handlers need not branch. */
export function exemptContext(clock: Clock): RequestContext {
  return {
    signal: neverAborted,
    expiresAt: Infinity,
    remainingMs: () => Infinity,
    criticality: 'critical',
    attempt: 1,
    key: '',
    route: 'exempt',
    clock,
  };
}
