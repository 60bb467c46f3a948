/**
 * The client a `dependency()` is. Each call runs its attempts through one path, cheapest check
 * first — the caller's deadline → the breaker → the cap → the throttle → the work — and every
 * attempt ends in one verdict, recorded in one place, which then frees what it held. Nothing on
 * a call's way is `async` (an async function settles two microtasks after the promise it awaits,
 * per layer): a successful attempt costs one `.then` over the work, and the retry loop is
 * entered only after a failed first attempt. What throws before a call starts still rejects.
 *
 * @module
 */
import {
  carryBudget,
  classifyError,
  DeadlineExceededError,
  isSpillwayError,
  rejectionError,
  SpillwayArgumentError,
  ThrottledError,
  type AcquireResult,
  type AdaptiveThrottle,
  type CircuitBreaker,
  type ConcurrencyLimit,
  type RetryBudget,
  type TokenBucket,
} from '../index.js';
import { newAttempt, armAttempt, judge } from './attempt.js';
import { endAttempt } from './attempt-end.js';
import { attemptChannel } from '../channels/channels.js';
import { publishAttempt } from './attempt-message.js';
import type { Attempt, CallState, Verdict, Work } from './records.js';
import { callStateOf } from './call-state.js';
import { fallBack, heldOr } from './fallback.js';
import { retriesAfter } from './retries-after.js';
import type { Settings } from './settings.js';
import type { CallOptions, Dependency, DependencyContext } from './types.js';
import { CallWork, FetchWork, rejection } from './work.js';

export class Client implements Dependency {
  readonly name: string;
  readonly budget: RetryBudget;
  readonly breaker: CircuitBreaker | undefined;
  readonly throttle: AdaptiveThrottle | undefined;
  readonly limiter: ConcurrencyLimit;
  readonly pace: TokenBucket | undefined;
  readonly #s: Settings;

  constructor(settings: Settings) {
    this.#s = settings;
    this.name = settings.name;
    this.budget = settings.budget.withdrawOnly();
    this.breaker = settings.breaker;
    this.throttle = settings.throttle;
    this.limiter = settings.limiter;
    this.pace = settings.pace;
  }

  get active(): number {
    return this.#s.limiter.active;
  }

  get queued(): number {
    return this.#s.limiter.queued;
  }

  fetch(
    input: string | URL | Request,
    init?: RequestInit,
    options?: CallOptions<Response>,
  ): Promise<Response> {
    try {
      return this.#call(new FetchWork(this.#s, input, init), options);
    } catch (error) {
      return rejection(error);
    }
  }

  call<T>(
    fn: (context: DependencyContext) => T | PromiseLike<T>,
    options?: CallOptions<T>,
  ): Promise<T> {
    if (typeof fn !== 'function') {
      return Promise.reject(new SpillwayArgumentError('fn', 'a function', fn));
    }
    try {
      return this.#call(new CallWork(fn, this.#s.names), options);
    } catch (error) {
      return rejection(error);
    }
  }

  #call<T>(work: Work<T>, options: CallOptions<T> | undefined): Promise<T> {
    const s = this.#s;
    const call = callStateOf(work, options, s);
    const unlink = call.unlink;
    if (call.signal?.aborted === true) {
      unlink?.();
      return rejection(call.signal.reason);
    }
    let settled = this.#attempt(call, 1);
    // Several caller signals were joined by listeners: they go when the call has settled.
    if (unlink !== undefined) settled.then(unlink, unlink);
    // Off by default, each a promise more: an answer held back for a retry not made, and a
    // fallback for the failures the user chose.
    if (work.holds === true && call.idempotent && call.maxAttempts > 1) {
      settled = settled.then(undefined, (error: unknown) => heldOr(call, error));
    }
    if (call.fallback !== undefined) {
      const on = s.fallback!.on;
      settled = settled.then(undefined, (error: unknown) => fallBack(call, error, on));
    }
    return settled;
  }

  /**
   * One attempt, up to the cap's answer: the caller's deadline → the breaker → (paced: a token)
   * → a place under the cap. Never throws: a failure rejects, or hands the first attempt to the
   * retry loop.
   */
  #attempt<T>(call: CallState<T>, number: number): Promise<T> {
    const s = this.#s;
    const attempt = newAttempt(call, number);
    if (call.signal?.aborted === true) return this.#failed(attempt, call.signal.reason, 'caller');
    // A refusal is returned, not thrown: under overload it is the common way out.
    let refused: unknown;
    let thrown = false;
    // Without a deadline the clock is not read at all; a first attempt starts at once, so it
    // checks its deadline against the reading the deadline was made from, if there was one.
    let now = Number.NaN;
    try {
      const expiresAt = call.expiresAt;
      if (expiresAt !== Infinity)
        now = number === 1 && !Number.isNaN(call.readAt) ? call.readAt : s.clock.now();
      refused =
        expiresAt <= now ? new DeadlineExceededError() : s.breakerGate?.enter(attempt, s.name);
    } catch (error) {
      // A clock or breaker passed in is user code.
      refused = error;
      thrown = true;
    }
    if (refused !== undefined || thrown) {
      const verdict = attempt.call.signal?.aborted === true ? 'caller' : 'local';
      return this.#failed(attempt, refused, verdict);
    }
    if (s.pace !== undefined) return this.#paced(attempt);
    return this.#capped(attempt, now);
  }

  /**
   * The rest of an attempt from the cap on: a place under it, then {@link #granted}. `now`: the
   * clock's reading the attempt was checked with, which an answer of the cap given at once
   * still stands on (NaN when none was made).
   */
  #capped<T>(attempt: Attempt<T>, now: number): Promise<T> {
    let acquired: AcquireResult | Promise<AcquireResult> | undefined;
    try {
      acquired = this.#cap(attempt);
    } catch (error) {
      const verdict = attempt.call.signal?.aborted === true ? 'caller' : 'local';
      return this.#failed(attempt, error, verdict);
    }
    if (acquired instanceof Promise) {
      return acquired.then((a) => this.#granted(attempt, a, Number.NaN));
    }
    return this.#granted(attempt, acquired, now);
  }

  /**
   * A paced attempt: a token from the dependency's own rate first, in line, then a place under
   * the cap — so no slot is held while it waits for its turn.
   */
  #paced<T>(attempt: Attempt<T>): Promise<T> {
    const s = this.#s;
    const call = attempt.call;
    const expiresAt = call.expiresAt;
    return s
      .pace!.take({
        signal: call.signal,
        maxWaitMs: s.maxPaceWaitMs,
        deadline: expiresAt === Infinity ? undefined : expiresAt,
      })
      .then(
        () => this.#capped(attempt, Number.NaN),
        (error: unknown) =>
          this.#failed(attempt, error, call.signal?.aborted === true ? 'caller' : 'local'),
      );
  }

  /**
   * A place under the cap: `undefined` when a free slot was taken at once (without a permit
   * object when nothing needs one), the permit's answer otherwise; only a wait in line costs a
   * promise.
   */
  #cap(attempt: Attempt<unknown>): AcquireResult | Promise<AcquireResult> | undefined {
    const call = attempt.call;
    const limiter = this.#s.limiter;
    if (limiter.takeSlot()) {
      attempt.slot = true;
      return undefined;
    }
    if (limiter.queued === 0 && limiter.active < limiter.limit) return limiter.tryAcquire();
    return limiter.acquire({
      signal: call.signal,
      criticality: call.criticality,
      deadline: call.expiresAt,
    });
  }

  /**
   * The rest of an attempt once the cap has answered (`undefined`: a slot was taken without a
   * permit): the deadline again → the throttle (for a retry, or for every attempt with
   * `throttleFirstAttempts`) → the work. Never throws either. `readAt`: the clock's reading
   * made in the same turn, if any (NaN: none, or the cap made it wait).
   */
  #granted<T>(
    attempt: Attempt<T>,
    acquired: AcquireResult | undefined,
    readAt: number,
  ): Promise<T> {
    const s = this.#s;
    const call = attempt.call;
    if (acquired !== undefined) {
      if (!acquired.ok) {
        if (acquired.reason === 'aborted' && call.signal !== undefined) {
          return this.#failed(attempt, call.signal.reason, 'caller');
        }
        const error = rejectionError(acquired.reason, { retryAfterMs: acquired.retryAfterMs });
        return this.#failed(attempt, error, 'local');
      }
      attempt.permit = acquired.permit;
    }
    const expiresAt = call.expiresAt;
    const bounded = expiresAt !== Infinity;
    // The throttle stands in a retry's way; in a first attempt's only when asked to.
    const gate = attempt.number > 1 || s.throttleFirstAttempts ? s.throttleGate : undefined;
    // One reading for the deadline's check, what is left of it and a throttle built here: the
    // attempt's own when the cap answered at once.
    let now = readAt;
    if (Number.isNaN(now) && (bounded || gate?.readsClock === true)) now = s.clock.now();
    if (bounded && expiresAt <= now) {
      // Granted at the very edge of the deadline: too late to send anything.
      return this.#failed(attempt, new DeadlineExceededError(), 'local');
    }
    if (gate !== undefined) {
      const d = gate.enter(call, now);
      if (!d.ok) {
        const error = new ThrottledError({
          rejectProbability: d.rejectProbability,
          dependency: s.name,
        });
        return this.#failed(attempt, error, 'local');
      }
    }
    armAttempt(attempt, bounded ? expiresAt - now : Infinity, s);
    let started: T | PromiseLike<T>;
    try {
      started = call.work.start(attempt);
    } catch (error) {
      // Thrown before the work began (the caller's bad headers, a function that throws at
      // once): passed on as it is, and nothing was asked of the dependency.
      return this.#failed(attempt, error, 'caller');
    }
    return Promise.resolve(started).then(
      (value) => this.#answered(attempt, value),
      (error: unknown) => this.#faulted(attempt, error),
    );
  }

  /** An attempt's work answered: reads the answer, records it, and frees what it held. */
  #answered<T>(attempt: Attempt<T>, value: T): T | Promise<T> {
    const work = attempt.call.work;
    let settling: Promise<T> | undefined;
    try {
      settling = work.settle?.(value, attempt);
    } catch (error) {
      // Not an answer at all (a fetch that resolved with something not a Response).
      return this.#failed(attempt, error, 'caller');
    }
    // Settled as it stands: an answer that does not count against the dependency.
    if (settling === undefined) {
      this.#end(attempt, 'ok', value);
      return value;
    }
    return settling.then(
      (v) => {
        this.#end(attempt, work.failed?.(v) === true ? 'bad-answer' : 'ok', v);
        return v;
      },
      (error: unknown) => this.#failed(attempt, error, work.verdictOf?.(error)),
    );
  }

  /** An attempt's work rejected. */
  #faulted<T>(attempt: Attempt<T>, error: unknown): Promise<T> {
    const work = attempt.call.work;
    // Aborted by its own timer or by the caller: `judge` reads which from the scope.
    if (attempt.scope.fired !== undefined || attempt.call.signal?.aborted === true) {
      return this.#failed(attempt, error);
    }
    if (work.callersOwn?.(error) === true) return this.#failed(attempt, error, 'caller');
    return this.#failed(attempt, work.fault === undefined ? error : work.fault(error));
  }

  /**
   * An attempt that failed: records it as `verdict` (or as `judge` reads the error), frees
   * what it held, and ends it.
   */
  #failed<T>(attempt: Attempt<T>, error: unknown, verdict?: Verdict): Promise<T> {
    let failure = error;
    if (verdict === undefined) [failure, verdict] = judge(attempt, error);
    // A failure of this dependency carries its budget: a retry() around this call that was
    // given none draws from it, so the layers above cannot multiply the attempts.
    if (
      isSpillwayError(failure) &&
      (failure as { dependency?: unknown }).dependency === this.name
    ) {
      carryBudget(failure, this.budget);
    }
    this.#end(attempt, verdict, failure);
    // The caller's own doing goes back to it as it is: never retried, so no budget is asked
    // (a function that throws `{ status: 503 }` at once has not heard from the dependency).
    if (verdict === 'caller') return rejection(failure);
    return this.#ended(attempt, failure);
  }

  /**
   * Ends an attempt: every path that ends one comes here, once, so it is also where the
   * attempt is published, with `what` it ended with (answer or error).
   */
  #end(attempt: Attempt<unknown>, verdict: Verdict, what: unknown): void {
    if (attemptChannel.hasSubscribers) {
      publishAttempt(this.#s.name, { number: attempt.number, outcome: verdict }, what);
    }
    endAttempt(this.#s, attempt, verdict);
  }

  /**
   * A failed attempt's end: after a first attempt, when more are allowed, the retry loop takes
   * over (`retries-after.ts`); otherwise a rejection.
   */
  #ended<T>(attempt: Attempt<T>, error: unknown): Promise<T> {
    const call = attempt.call;
    if (attempt.number > 1 || call.maxAttempts <= 1) return rejection(error);
    // A failure the loop would pass up untouched does not enter it: a local refusal, an error
    // that is no overload signal, one never to be retried (a callee's `never`, a spent budget
    // below), or one that reached a callee for work that is not idempotent. Under overload,
    // most calls end here.
    const c = classifyError(error);
    if (c === undefined || !c.retryable || (c.sent && !call.idempotent)) return rejection(error);
    return retriesAfter(attempt, error, {
      settings: this.#s,
      budget: this.budget,
      attempt: (n) => this.#attempt(call, n),
    });
  }
}
