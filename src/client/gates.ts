/**
 * The breaker's and the throttle's places in an attempt, each written once for a part the
 * dependency built and once for a part passed in. `enter` lets an attempt through or refuses
 * it; `leave` hears how an attempt it let through ended. A part built here shares the
 * dependency's clock, so it takes the client's readings and lets a call past a closed breaker
 * without a ticket object; a part passed in keeps its own clock and is driven through its
 * public methods.
 *
 * @module
 */
import {
  CircuitOpenError,
  type AdaptiveThrottle,
  type CircuitBreaker,
  type ThrottleDecision,
} from '../index.js';
import type { OwnedAdaptiveThrottle, OwnedCircuitBreaker } from '../core/internal/owned.js';
import type { Attempt, CallState } from './records.js';

/** What an attempt's end tells the breaker. */
export type BreakerReport = 'success' | 'failure' | 'ignore';

/** The circuit breaker in an attempt's way. */
export interface BreakerGate {
  /** Whether `leave` takes a reading of the dependency's clock. */
  readonly readsClock: boolean;
  /** Lets `attempt` through (noting what it must report later), or the refusal. */
  enter(attempt: Attempt<unknown>, dependency: string): CircuitOpenError | undefined;
  /** Tells the breaker how an attempt it let through ended, once (`now`: a reading, or NaN). */
  leave(attempt: Attempt<unknown>, report: BreakerReport, now: number): void;
}

/** The adaptive throttle in an attempt's way. */
export interface ThrottleGate {
  /** Whether `enter` and `leave` take readings of the dependency's clock. */
  readonly readsClock: boolean;
  enter(call: CallState<unknown>, now: number): ThrottleDecision;
  /** The dependency accepted the request, or refused (or left unanswered) it. */
  leave(call: CallState<unknown>, accepted: boolean, now: number): void;
}

/** A breaker passed in: a ticket per attempt. */
class TicketBreakerGate implements BreakerGate {
  readonly readsClock: boolean = false;
  readonly #breaker: CircuitBreaker;

  constructor(breaker: CircuitBreaker) {
    this.#breaker = breaker;
  }

  enter(attempt: Attempt<unknown>, dependency: string): CircuitOpenError | undefined {
    const d = this.#breaker.tryAcquire();
    if (!d.ok) return new CircuitOpenError({ retryAfterMs: d.retryAfterMs, dependency });
    attempt.ticket = d.call;
    return undefined;
  }

  leave(attempt: Attempt<unknown>, report: BreakerReport, _now?: number): void {
    const ticket = attempt.ticket;
    if (ticket === undefined) return;
    if (report === 'success') ticket.success();
    else if (report === 'failure') ticket.failure();
    else ticket.ignore();
  }
}

/** A breaker built here: while it is closed, an attempt goes through under its generation. */
class OwnBreakerGate extends TicketBreakerGate {
  override readonly readsClock = true;
  readonly #own: OwnedCircuitBreaker;

  constructor(own: OwnedCircuitBreaker) {
    super(own);
    this.#own = own;
  }

  override enter(attempt: Attempt<unknown>, dependency: string): CircuitOpenError | undefined {
    const generation = this.#own.admitClosed();
    if (generation < 0) return super.enter(attempt, dependency);
    attempt.generation = generation;
    return undefined;
  }

  override leave(attempt: Attempt<unknown>, report: BreakerReport, now: number): void {
    if (attempt.generation < 0) super.leave(attempt, report);
    // Ignoring a call a closed breaker let in changes nothing: nothing to report.
    else if (report !== 'ignore') this.#own.reportClosed(attempt.generation, report, now);
  }
}

/** A throttle passed in, by criticality on its own clock. */
class PublicThrottleGate implements ThrottleGate {
  readonly readsClock = false;
  readonly #throttle: AdaptiveThrottle;

  constructor(throttle: AdaptiveThrottle) {
    this.#throttle = throttle;
  }

  enter(call: CallState<unknown>): ThrottleDecision {
    return this.#throttle.tryRequest(call.criticality);
  }

  leave(call: CallState<unknown>, accepted: boolean): void {
    if (accepted) this.#throttle.recordAccept(call.criticality);
    else this.#throttle.recordRefusal(call.criticality);
  }
}

/** A throttle built here, by rank at the client's readings. */
class OwnThrottleGate implements ThrottleGate {
  readonly readsClock = true;
  readonly #own: OwnedAdaptiveThrottle;

  constructor(own: OwnedAdaptiveThrottle) {
    this.#own = own;
  }

  enter(call: CallState<unknown>, now: number): ThrottleDecision {
    return this.#own.tryRequestAt(call.rank, now);
  }

  leave(call: CallState<unknown>, accepted: boolean, now: number): void {
    if (accepted) this.#own.recordAcceptAt(call.rank, now);
    else this.#own.recordRefusalAt(call.rank, now);
  }
}

/** The gate for a breaker; `own` when the dependency built it. */
export function breakerGate(breaker: CircuitBreaker, own: boolean): BreakerGate {
  return own ? new OwnBreakerGate(breaker as OwnedCircuitBreaker) : new TicketBreakerGate(breaker);
}

/** The gate for a throttle; `own` when the dependency built it. */
export function throttleGate(throttle: AdaptiveThrottle, own: boolean): ThrottleGate {
  return own
    ? new OwnThrottleGate(throttle as OwnedAdaptiveThrottle)
    : new PublicThrottleGate(throttle);
}
