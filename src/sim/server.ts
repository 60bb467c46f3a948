/**
 * A simulated server: K slots behind a bounded FIFO line (`server-slots.ts`; the limit follows
 * the capacity schedule), optionally Spillway's admission in front (a real `concurrencyLimit`,
 * fixed or adaptive, that honours the propagated deadline). Served, it
 * answers, refuses, or calls its callees and passes their failure up as the HTTP guard would:
 * a refusal with its signal (`never` once a layer below retried), anything else a 500.
 *
 * Answers travel by callback, not by promise: the simulator's own parts (servers, the control
 * group's links, users) cost a function call where an `async` server cost a promise, a
 * microtask and a throw per step — 3 to 6 × the simulated requests a second for the control
 * group, with every figure the same. Only the real primitives' own promises remain (a wait in
 * the guard's line, `dependency().call()`).
 *
 * @module
 */
import {
  aimdLimit,
  DependencyOverloadedError,
  gradientLimit,
  vegasLimit,
  type AcquireResult,
  type ConcurrencyLimit,
  type LimitSource,
  type RetrySignal,
} from '../index.js';
import { refusalFromError, refusalTable, retryAfterSeconds, type Refusal } from '../http/index.js';
import { refusalOfRejection } from '../http/refusal-of-rejection.js';
import { statedWaitMs } from '../http/refusal-response.js';
import type { SimClock } from './sim-clock.js';
import type { Random } from './random.js';
import type { SimLimit } from './types.js';
import { ServerSlots, type Answer, type Done, type SimRequest } from './server-slots.js';

export type { Answer, Done, SimRequest };

/** What a server does once a request has been served, answering through `done`. */
export type Behaviour = (request: SimRequest, done: Done) => void;

/** Counters of one server, filled in as it runs. */
export interface ServerCounters {
  received: number;
  refused: number;
  served: number;
  wasted: number;
  readonly receivedPerBucket: number[];
}

/** The built parts of a server (checked options). */
export interface ServerParts {
  readonly name: string;
  readonly clock: SimClock;
  readonly slots: { current: number };
  readonly maxQueue: number;
  readonly sample: () => number;
  readonly guard: ConcurrencyLimit | undefined;
  readonly bucketMs: number;
  readonly maxBuckets: number;
}

/**
 * Distinct refusals a server keeps made (signals × the whole seconds of `Retry-After`: a
 * handful in practice).
 */
export const maxAnswers = 64;

/** The guard's refusal of a request whose deadline is spent on arrival. */
const spentDeadline: AcquireResult = Object.freeze({ ok: false, reason: 'deadline' });

/** The server; `behaviour` runs once a request has been served (`undefined`: answers ok). */
export class SimServer {
  readonly counters: ServerCounters = {
    received: 0,
    refused: 0,
    served: 0,
    wasted: 0,
    receivedPerBucket: [],
  };
  behaviour: Behaviour = (_request, done) => done(undefined);
  readonly #p: ServerParts;
  /** Each distinct refusal, made once (see `#refusal`). */
  readonly #answers = new Map<string, DependencyOverloadedError>();
  readonly #slots: ServerSlots;
  #downUntil = -Infinity;

  constructor(p: ServerParts) {
    this.#p = p;
    this.#slots = new ServerSlots(p.slots, p.maxQueue, this.#serve);
  }

  /**
   * Empties the line (every request waiting for a slot is answered with a 503) and refuses
   * every request arriving in the next `downMs`.
   */
  restart(downMs: number): void {
    this.#downUntil = this.#p.clock.now() + downMs;
    this.#slots.clear(this.#refuse);
  }

  /**
   * Serves `request`, then calls `answer` once with it: with no failure on success, with what
   * the caller receives otherwise. As the guard admits, only a wait in line costs a promise: a
   * spent deadline is refused at the door, a free slot taken at once, the service time a timer.
   */
  handle(request: SimRequest, answer: Answer): void {
    const p = this.#p;
    const c = this.counters;
    const now = p.clock.now();
    c.received++;
    const bucket = Math.min(Math.floor(now / p.bucketMs), p.maxBuckets - 1);
    c.receivedPerBucket[bucket] = (c.receivedPerBucket[bucket] ?? 0) + 1;
    if (now < this.#downUntil) {
      c.refused++;
      return answer(this.#refusal('later'), request);
    }
    const guard = p.guard;
    if (guard === undefined) return this.#line(request, answer);
    if (request.expiresAt <= now) return this.#admitted(request, spentDeadline, answer);
    const g = guard.tryAcquire();
    if (g.ok || !guard.hasRoom()) return this.#admitted(request, g, answer);
    // A wait in the real guard's line is a promise (and may shed a waiter, settling its own).
    p.clock.touch();
    void guard
      .acquire({ deadline: request.expiresAt })
      .then((g) => this.#admitted(request, g, answer));
  }

  /** The guard's answer: refused as the guard refuses, or on to the server's own line. */
  #admitted(request: SimRequest, g: AcquireResult, answer: Answer): void {
    if (g.ok) {
      const guard = this.#p.guard!;
      const permit = g.permit;
      return this.#line(request, (failure) => {
        // A slot given back to the real guard goes to its first waiter, settling its promise.
        if (guard.queued > 0) this.#p.clock.touch();
        permit.release(failure === undefined ? 'ok' : 'dropped');
        answer(failure, request);
      });
    }
    this.counters.refused++;
    // As the guard answers its own limit's refusal (never `aborted`: nothing aborts it).
    answer(this.#answer(refusalOfRejection(g)!), request);
  }

  /** A slot now, or a place in the line (which a restart empties); a full line refuses. */
  #line(request: SimRequest, answer: Answer): void {
    if (!this.#slots.enter(request, answer)) this.#refuse(request, answer);
  }

  /** A request refused by the server itself (a full line, a restart): a 503 saying `later`. */
  readonly #refuse = (request: SimRequest, answer: Answer): void => {
    this.counters.refused++;
    answer(this.#refusal('later'), request);
  };

  /** Holds a slot for a service time, then does what the server does, and frees the slot. */
  readonly #serve = (request: SimRequest, answer: Answer): void => {
    const c = this.counters;
    this.#p.clock.setOwnTimer(this.#p.sample(), () => {
      c.served++;
      if (request.abandoned) c.wasted++;
      this.behaviour(request, (failure) => {
        const passed = failure === undefined ? undefined : this.#passedUp(failure);
        this.#slots.release();
        answer(passed, request);
      });
    });
  };

  /**
   * The refusal a leaf set to `answer: 'refuse'` answers with: a bare 503 (no `Retry-After`, no
   * signal field), which the client reads as `elsewhere`.
   */
  refusalForAnswer(): DependencyOverloadedError {
    return this.#refusal('elsewhere');
  }

  /**
   * A 503 with `signal`, as the caller's client reads it. An answer is a value, like the
   * response the guard builds once per reason and writes again and again: each distinct one is
   * made once per server and frozen (so no caller marks it, and `carryBudget` leaves it alone),
   * instead of an error object per refusal — which cost a third of a refused request. Past
   * {@link maxAnswers} distinct answers, each is made afresh.
   */
  #refusal(signal: RetrySignal, retryAfterMs?: number): DependencyOverloadedError {
    const key = retryAfterMs === undefined ? signal : `${signal} ${retryAfterMs}`;
    const known = this.#answers.get(key);
    if (known !== undefined) return known;
    const name = this.#p.name;
    const answer = new DependencyOverloadedError(`${name} refused the request (503)`, {
      signal,
      retryAfterMs,
      dependency: name,
      status: 503,
    });
    if (this.#answers.size < maxAnswers) this.#answers.set(key, Object.freeze(answer));
    return answer;
  }

  /** What the caller receives for a failure here: the guard's refusal for it, or a 500. */
  #passedUp(error: unknown): Error {
    if (error instanceof DependencyOverloadedError && error.dependency === this.#p.name) {
      return error;
    }
    const refusal = refusalFromError(error);
    if (refusal === undefined) return new Error(`${this.#p.name} failed (500)`, { cause: error });
    return this.#answer(refusal);
  }

  /** The guard's answer to `refusal`, as the caller's client reads it (see `answerOf`). */
  #answer(refusal: Refusal): DependencyOverloadedError {
    const a = answerOf(refusal);
    return this.#refusal(a.signal, a.retryAfterMs);
  }
}

/**
 * What the caller's client reads from the guard's answer to `refusal`: the reason's default
 * signal unless the refusal names one, and for `later` the wait the guard states, as
 * `Retry-After` carries it (whole seconds; the client reads that header before the body).
 * Tested against the real response read by the real client.
 */
export function answerOf(refusal: Refusal): {
  readonly signal: RetrySignal;
  readonly retryAfterMs: number | undefined;
} {
  const signal = refusal.signal ?? refusalTable[refusal.reason].signal ?? 'later';
  const retryAfterMs =
    signal === 'later' ? retryAfterSeconds(statedWaitMs(refusal.retryAfterMs)) * 1000 : undefined;
  return { signal, retryAfterMs };
}

/** The guard's limit: a number, or a fresh adaptive limit by name. */
export function guardLimit(limit: SimLimit, random: Random): number | LimitSource {
  if (limit === 'aimd') return aimdLimit();
  if (limit === 'gradient') return gradientLimit();
  if (limit === 'vegas') return vegasLimit({ random });
  return limit;
}
