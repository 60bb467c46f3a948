/**
 * `dependency()`: everything a caller owes one callee, in one object. Each call goes through,
 * cheapest first: the caller's deadline → the circuit breaker → a cap on calls in flight (with a
 * short, bounded line) → the adaptive throttle → the request, carrying the remaining deadline,
 * the criticality and the attempt number, and aborted (socket released) when the attempt's time
 * is up, its slot held until the request has actually settled. The callee's answer is read for
 * its signal; refusals become typed errors carrying `signal` and `retryAfterMs`, and are retried
 * only when the work is idempotent, the signal invites it, the budget allows it and the wait
 * fits the deadline. Refusals made here never count against the dependency.
 *
 * @module
 */
import {
  backoff as makeBackoff,
  CircuitOpenError,
  carryBudget,
  classifyError,
  criticalities,
  criticalityRank,
  DeadlineExceededError,
  DependencyOverloadedError,
  DependencyTimeoutError,
  DependencyUnreachableError,
  isCriticality,
  isLocalRefusal,
  isRetryBudget,
  isSpillwayError,
  isUnsentNetworkError,
  maxAttemptsLimit,
  rejectionError,
  retryBudget,
  SpillwayArgumentError,
  SpillwayConfigError,
  systemClock,
  ThrottledError,
  type AdaptiveThrottle,
  type AdaptiveThrottleOptions,
  type Backoff,
  type BackoffOptions,
  type BreakerCall,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type Clock,
  type ConcurrencyLimit,
  type AcquireResult,
  type Criticality,
  type LimitSource,
  type Permit,
  type PermitOutcome,
  type RetryBudget,
  type RetryBudgetOptions,
} from '../index.js';
import { headerNamesOf, type HeaderNames } from '../http/index.js';
import {
  ownedAdaptiveThrottle,
  type OwnedAdaptiveThrottle,
} from '../core/adaptive-throttle/adaptive-throttle.js';
import {
  ownedCircuitBreaker,
  type OwnedCircuitBreaker,
} from '../core/circuit-breaker/circuit-breaker.js';
import {
  ownedConcurrencyLimit,
  type OwnedConcurrencyLimit,
} from '../core/concurrency-limit/concurrency-limit.js';
import { AttemptScope, joinSignals } from './attempt-scope.js';
import { mergeHeaders, propagationHeaders, type HeadersLike } from './propagation.js';
import { retryAfterFailure } from '../core/retry/retry.js';
import { refusalOf } from './response-signal.js';

/** A function with `fetch`'s shape: the global one, undici's, or any compatible wrapper. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Retry settings of a dependency. */
export interface DependencyRetryOptions {
  /** Attempts in all, the first included: 1 to 5. @default 3 */
  readonly maxAttempts?: number;
  /** A backoff, or options for the full-jitter one. @default backoff() (100 ms base, 1 s cap) */
  readonly backoff?: Backoff | BackoffOptions;
}

/** Options of {@link dependency}. */
export interface DependencyOptions {
  /** The callee's name, carried by every error. Required. */
  readonly name: string;
  /**
   * Most calls in flight at once: a positive integer or an object whose `current` is read on
   * every decision (adaptive limits). @default 64
   */
  readonly limit?: number | LimitSource;
  /** Most calls waiting for a slot; more are refused at once. @default 64 */
  readonly maxQueue?: number;
  /** Longest wait for a slot, in ms (the deadline, if shorter, wins). @default 1_000 */
  readonly maxQueueWaitMs?: number;
  /** Retry settings, or `false` for a single attempt. @default { maxAttempts: 3 } */
  readonly retry?: DependencyRetryOptions | false;
  /**
   * The retry budget, or options for this dependency's own one. Pass one budget to several
   * dependencies to share it (they then share its fate). @default retryBudget() (gRPC A6: 10 tokens, 0.1)
   */
  readonly budget?: RetryBudget | RetryBudgetOptions;
  /**
   * A circuit breaker, options for one, or `false`.
   * @default circuitBreaker({ trip: { kind: 'time', windowMs: 30_000, minimumCalls: 20, failureRatio: 0.5 } })
   */
  readonly breaker?: CircuitBreaker | CircuitBreakerOptions | false;
  /** An adaptive throttle, options for one, or `false`. @default adaptiveThrottle() (k = 2, 2 minutes) */
  readonly throttle?: AdaptiveThrottle | AdaptiveThrottleOptions | false;
  /** Longest one attempt may take, in ms; it is then aborted. @default undefined (only the deadline) */
  readonly timeoutMs?: number | undefined;
  /** The fetch to use. @default globalThis.fetch */
  readonly fetch?: FetchLike;
  /** Resolves relative string inputs of `fetch`, e.g. `'http://users.internal:8080'`. */
  readonly baseUrl?: string | URL | undefined;
  /** Names of the propagation and signal fields. @default defaultHeaderNames */
  readonly headerNames?: Partial<HeaderNames>;
  /** Where time comes from; breaker, throttle and budget built here use it too. @default systemClock */
  readonly clock?: Clock;
}

/** A deadline: anything with `expiresAt` on the dependency's clock (a `Deadline` too), or ms from now. */
export type DeadlineInput =
  number | { readonly expiresAt: number; readonly signal?: AbortSignal | undefined };

/** Options of one call. */
export interface CallOptions {
  /** The caller's signal: aborting cancels the call, its wait and its retries. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Whether the work may safely run twice. `fetch`: by default true for GET, HEAD, OPTIONS,
   * TRACE, PUT and DELETE. `call`: false by default.
   */
  readonly idempotent?: boolean | undefined;
  /** How important the call is; sent as `Spillway-Criticality`. @default 'critical' */
  readonly criticality?: Criticality | undefined;
  /**
   * When the caller stops caring: an object with `expiresAt` on the dependency's clock (such as
   * a `Deadline` or the incoming request's), or a number of milliseconds from now. Unlike
   * `concurrencyLimit`'s `acquire({ deadline })`, a number here is relative.
   */
  readonly deadline?: DeadlineInput | undefined;
}

/** What `call`'s function receives on each attempt. */
export interface DependencyContext {
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Aborts when the attempt's time is up or the caller gives up: pass it to the request. */
  readonly signal: AbortSignal;
  /** The propagation fields to send with this attempt (deadline, criticality, attempt). */
  readonly headers: Readonly<Record<string, string>>;
  readonly criticality: Criticality;
  /** Milliseconds this attempt may take, if bounded. */
  readonly remainingMs: number | undefined;
}

/** One callee, with the caller's obligations built in. */
export interface Dependency {
  readonly name: string;
  /**
   * `fetch` with the obligations: resolves with the response for any answer that is not a
   * refusal (including 4xx and 500s); rejects with a typed Spillway error otherwise.
   */
  fetch(
    input: string | URL | Request,
    init?: RequestInit,
    options?: CallOptions,
  ): Promise<Response>;
  /** Any call (a database, a gRPC stub…) with the same obligations. */
  call<T>(
    fn: (context: DependencyContext) => T | PromiseLike<T>,
    options?: CallOptions,
  ): Promise<T>;
  /**
   * This dependency's retry budget, withdraw-only: hand it to any `retry()` wrapped around
   * this dependency's calls, so every retry layer in the process draws from the same tokens
   * without counting an outcome twice.
   */
  readonly budget: RetryBudget;
  readonly breaker: CircuitBreaker | undefined;
  readonly throttle: AdaptiveThrottle | undefined;
  /** The cap on calls in flight. */
  readonly limiter: ConcurrencyLimit;
  /** Calls in flight now. */
  readonly active: number;
  /** Calls waiting for a slot now. */
  readonly queued: number;
}

const defaults = {
  limit: 64,
  maxQueue: 64,
  maxQueueWaitMs: 1_000,
  maxAttempts: 3,
  breaker: {
    trip: { kind: 'time', windowMs: 30_000, minimumCalls: 20, failureRatio: 0.5 },
  } satisfies CircuitBreakerOptions,
} as const;

const idempotentMethods: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'PUT',
  'DELETE',
]);

/**
 * Creates a dependency.
 *
 * @example
 * const users = dependency({ name: 'users', baseUrl: 'http://users.internal', limit: 32, timeoutMs: 2_000 });
 * const res = await users.fetch('/v1/users/42', undefined, { deadline: incoming.deadline });
 */
export function dependency(options: DependencyOptions): Dependency {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SpillwayConfigError('dependency options', 'an options object', options);
  }
  const o = options;
  if (typeof o.name !== 'string' || o.name.length === 0) {
    throw new SpillwayConfigError('name', 'a non-empty string', o.name);
  }
  const clock = o.clock ?? systemClock;
  const limiter = ownedConcurrencyLimit({
    limit: o.limit ?? defaults.limit,
    maxQueue: o.maxQueue ?? defaults.maxQueue,
    maxQueueWaitMs: o.maxQueueWaitMs ?? defaults.maxQueueWaitMs,
    clock,
  });
  let maxAttempts: number = defaults.maxAttempts;
  let backoff: Backoff = makeBackoff();
  if (o.retry === false) {
    maxAttempts = 1;
  } else if (o.retry !== undefined) {
    if (typeof o.retry !== 'object' || o.retry === null) {
      throw new SpillwayConfigError('retry', 'retry options or false', o.retry);
    }
    const m = o.retry.maxAttempts ?? defaults.maxAttempts;
    if (!Number.isInteger(m) || m < 1 || m > maxAttemptsLimit) {
      throw new SpillwayConfigError(
        'retry.maxAttempts',
        `an integer from 1 to ${maxAttemptsLimit}`,
        m,
      );
    }
    maxAttempts = m;
    const b = o.retry.backoff;
    if (b !== undefined) {
      backoff = typeof (b as Backoff).next === 'function' ? (b as Backoff) : makeBackoff(b);
    }
  }
  const budget = isRetryBudget(o.budget)
    ? o.budget
    : retryBudget(withClock(o.budget, clock) as RetryBudgetOptions | undefined);
  for (const key of ['breaker', 'throttle'] as const) {
    const value = o[key];
    if (value !== undefined && value !== false && (typeof value !== 'object' || value === null)) {
      throw new SpillwayConfigError(key, `a ${key}, options for one, or false`, value);
    }
  }
  // A breaker and a throttle built here keep this dependency's clock, so one reading serves
  // both; one passed in keeps its own clock and is driven through its public methods.
  const ownBreaker =
    o.breaker === false || isBreaker(o.breaker)
      ? undefined
      : // Options tune the documented default, never replace it: `{ openMs }` keeps its trip.
        ownedCircuitBreaker({ ...defaults.breaker, ...o.breaker, name: o.name, clock });
  const breaker = o.breaker === false ? undefined : (ownBreaker ?? (o.breaker as CircuitBreaker));
  const ownThrottle =
    o.throttle === false || isThrottle(o.throttle)
      ? undefined
      : ownedAdaptiveThrottle({ ...(o.throttle ?? {}), clock });
  const throttle =
    o.throttle === false ? undefined : (ownThrottle ?? (o.throttle as AdaptiveThrottle));
  let timeoutMs = Infinity;
  if (o.timeoutMs !== undefined) {
    if (typeof o.timeoutMs !== 'number' || !(o.timeoutMs > 0) || !Number.isFinite(o.timeoutMs)) {
      throw new SpillwayConfigError('timeoutMs', 'a finite number greater than 0', o.timeoutMs);
    }
    timeoutMs = o.timeoutMs;
  }
  const fetchFn = o.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') {
    throw new SpillwayConfigError('fetch', 'a fetch-compatible function', fetchFn);
  }
  let baseUrl: BaseUrl | undefined;
  if (o.baseUrl !== undefined) {
    try {
      const url = new URL(o.baseUrl);
      if (url.origin === 'null') throw new TypeError('no origin');
      baseUrl = new BaseUrl(url);
    } catch {
      throw new SpillwayConfigError('baseUrl', 'an absolute URL', o.baseUrl);
    }
  }
  return new Client({
    name: o.name,
    clock,
    limiter,
    maxAttempts,
    backoff,
    budget,
    breaker,
    ownBreaker,
    throttle,
    ownThrottle,
    timeoutMs,
    fetch: fetchFn,
    baseUrl,
    names: headerNamesOf(o.headerNames),
  });
}

interface Settings {
  readonly name: string;
  readonly clock: Clock;
  readonly limiter: OwnedConcurrencyLimit;
  readonly maxAttempts: number;
  readonly backoff: Backoff;
  readonly budget: RetryBudget;
  readonly breaker: CircuitBreaker | undefined;
  /** `breaker` when it was built here (on `clock`): driven without a ticket per call. */
  readonly ownBreaker: OwnedCircuitBreaker | undefined;
  readonly throttle: AdaptiveThrottle | undefined;
  /** `throttle` when it was built here (on `clock`): given readings of `clock`. */
  readonly ownThrottle: OwnedAdaptiveThrottle | undefined;
  readonly timeoutMs: number;
  readonly fetch: FetchLike;
  readonly baseUrl: BaseUrl | undefined;
  readonly names: HeaderNames;
}

/**
 * One attempt's work. `start` begins it (what it throws is passed on as it is); `settle`, when
 * given, reads what it resolved with: undefined when that is the answer as it stands and does
 * not count against the dependency (the common case, settled without another promise), or a
 * promise of the answer, rejecting with the error to raise instead (a response that is a
 * refusal); what it throws is not an answer at all, and the caller's doing. `failed` says
 * whether an answer settled through that promise counts against the dependency (a 500 does).
 * A rejection of the work that neither timer nor caller caused is the caller's own when
 * `callersOwn` says so (a malformed request, refused before anything was sent), and is
 * otherwise turned by `fault` into the error to handle. `idempotent`, `replayable` and
 * `signal` are the call's defaults.
 */
interface Work<T> {
  readonly idempotent: boolean;
  readonly replayable: boolean;
  readonly signal: AbortSignal | undefined;
  start(attempt: Attempt<T>): T | PromiseLike<T>;
  settle?(value: T): Promise<T> | undefined;
  failed?(value: T): boolean;
  callersOwn?(error: unknown): boolean;
  fault?(error: unknown): unknown;
}

/** One call: its work and its settled options. */
interface CallState<T> {
  readonly work: Work<T>;
  /** Attempts allowed in all. */
  readonly maxAttempts: number;
  readonly expiresAt: number;
  /** True when a caller signal already aborts at `expiresAt` (a `Deadline`'s): no timer needed. */
  readonly deadlineSignalled: boolean;
  /** Every caller signal joined (the options', the init's, the deadline's). */
  readonly signal: AbortSignal | undefined;
  /** Removes the listeners joining several caller signals into `signal`, if it took any. */
  readonly unlink: (() => void) | undefined;
  readonly criticality: Criticality;
  /** The criticality's rank (see `criticalityRank`). */
  readonly rank: number;
  readonly idempotent: boolean;
  /** Whether the retry budget has counted the call as a request (at its first outcome). */
  requested: boolean;
}

/**
 * One attempt of a call, and what it holds until it settles. A literal, not a class: made on
 * every call, and a literal is allocated in place where a constructor may not be inlined.
 */
interface Attempt<T> {
  readonly call: CallState<T>;
  /** 1 for the first. */
  readonly number: number;
  /** The breaker's ticket; or, let in by this dependency's own closed breaker, its generation. */
  ticket: BreakerCall | undefined;
  generation: number;
  /** The cap's permit; or `slot` when a free slot was taken without one. */
  permit: Permit | undefined;
  slot: boolean;
  scope: AttemptScope;
  /** The propagation fields it sends, and the ms it has left (set once it may start). */
  headers: Readonly<Record<string, string>>;
  remainingMs: number | undefined;
}

const noHeaders: Readonly<Record<string, string>> = Object.freeze({});

const neverAborted = new AbortController().signal;
/** The scope of an attempt nothing bounds: no signal, no timer, nothing to dispose. */
const unboundedScope = new AttemptScope({
  clock: systemClock,
  callerSignal: undefined,
  timerMs: Infinity,
  reason: () => undefined,
});

/** A call's attempt `number`, before it has taken anything. */
function newAttempt<T>(call: CallState<T>, number: number): Attempt<T> {
  return {
    call,
    number,
    ticket: undefined,
    generation: -1,
    permit: undefined,
    slot: false,
    scope: unboundedScope,
    headers: noHeaders,
    remainingMs: undefined,
  };
}

/** What `call`'s function sees; the signal is made only if the function asks for it. */
class Context implements DependencyContext {
  readonly attempt: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly criticality: Criticality;
  readonly remainingMs: number | undefined;
  readonly #scope: AttemptScope;

  constructor(p: {
    readonly attempt: number;
    readonly scope: AttemptScope;
    readonly headers: Readonly<Record<string, string>>;
    readonly criticality: Criticality;
    readonly remainingMs: number | undefined;
  }) {
    this.attempt = p.attempt;
    this.headers = p.headers;
    this.criticality = p.criticality;
    this.remainingMs = p.remainingMs;
    this.#scope = p.scope;
  }

  get signal(): AbortSignal {
    return this.#scope.signal ?? neverAborted;
  }
}

/** `fetch` as one attempt's work: sends the propagation fields, reads the answer's signal. */
class FetchWork implements Work<Response> {
  readonly idempotent: boolean;
  readonly replayable: boolean;
  readonly signal: AbortSignal | undefined;
  readonly #s: Settings;
  readonly #target: string | URL | Request;
  readonly #init: RequestInit | undefined;
  readonly #baseHeaders: HeadersLike | undefined;

  constructor(s: Settings, input: string | URL | Request, init: RequestInit | undefined) {
    this.#s = s;
    this.#target =
      typeof input === 'string' && s.baseUrl !== undefined ? s.baseUrl.resolve(input) : input;
    this.#init = init;
    const request = typeof input === 'object' && input instanceof Request ? input : undefined;
    const method = init?.method ?? request?.method ?? 'GET';
    this.idempotent =
      method === 'GET' ||
      idempotentMethods.has(method) ||
      idempotentMethods.has(method.toUpperCase());
    // A streamed body cannot be sent twice, so such a request gets one attempt.
    this.replayable = isReplayable(init?.body) && (request === undefined || request.body === null);
    this.signal = init?.signal ?? undefined;
    this.#baseHeaders = init?.headers ?? request?.headers;
  }

  start(attempt: Attempt<Response>): Promise<Response> {
    const init = attemptInit(this.#init, this.#baseHeaders, attempt.headers);
    const signal = attempt.scope.signal;
    if (signal !== undefined) init.signal = signal;
    try {
      return this.#s.fetch(this.#target, init);
    } catch (error) {
      // A fetch that throws instead of rejecting failed the same way (see `callersOwn`).
      return rejection(error);
    }
  }

  settle(response: Response): Promise<Response> | undefined {
    // Only 429 and 5xx can be refusals or failures: any other answer is settled as it stands.
    // (Read once: undici checks its brand on every read.)
    const status = (response as Partial<Response> | null | undefined)?.status;
    if (typeof status !== 'number') {
      // A `fetch` option that resolves with something else (a bug, a mock, a wrapper that
      // returns nothing) has answered nothing: the caller's problem, not the dependency's.
      throw new TypeError(
        `The fetch given to dependency ${this.#s.name} resolved with ${describe(response)}, not a Response`,
      );
    }
    if (status < 500 && status !== 429) return undefined;
    const s = this.#s;
    return refusalOf(response, { names: s.names, wallNow: () => s.clock.wallNow() }).then(
      (refusal) => {
        if (refusal === undefined) return response;
        throw new DependencyOverloadedError(`${s.name} refused the request (${status})`, {
          signal: refusal.signal,
          retryAfterMs: refusal.retryAfterMs,
          dependency: s.name,
          status,
        });
      },
    );
  }

  failed(response: Response): boolean {
    return response.status >= 500;
  }

  /**
   * undici refuses a malformed request — a header value with a line break, a body on a GET, an
   * unsupported method, a bad URL — with a `TypeError` before anything is sent; every failure
   * on the network is `TypeError('fetch failed')` with the cause attached.
   */
  callersOwn(error: unknown): boolean {
    return error instanceof TypeError && error.message !== 'fetch failed';
  }

  fault(error: unknown): unknown {
    return new DependencyUnreachableError({
      sent: !isUnsentNetworkError(error),
      dependency: this.#s.name,
      cause: error,
    });
  }
}

/** Any function as one attempt's work: not idempotent unless the caller says so. */
class CallWork<T> implements Work<T> {
  readonly idempotent = false;
  readonly replayable = true;
  readonly signal = undefined;
  readonly #fn: (context: DependencyContext) => T | PromiseLike<T>;

  constructor(fn: (context: DependencyContext) => T | PromiseLike<T>) {
    this.#fn = fn;
  }

  start(attempt: Attempt<T>): T | PromiseLike<T> {
    return this.#fn(
      new Context({
        attempt: attempt.number,
        scope: attempt.scope,
        headers: attempt.headers,
        criticality: attempt.call.criticality,
        remainingMs: attempt.remainingMs,
      }),
    );
  }
}

class Client implements Dependency {
  readonly name: string;
  readonly budget: RetryBudget;
  readonly breaker: CircuitBreaker | undefined;
  readonly throttle: AdaptiveThrottle | undefined;
  readonly limiter: ConcurrencyLimit;
  readonly #s: Settings;

  constructor(settings: Settings) {
    this.#s = settings;
    this.name = settings.name;
    this.budget = settings.budget.withdrawOnly();
    this.breaker = settings.breaker;
    this.throttle = settings.throttle;
    this.limiter = settings.limiter;
  }

  get active(): number {
    return this.#s.limiter.active;
  }

  get queued(): number {
    return this.#s.limiter.queued;
  }

  // Nothing on a call's way is `async`: an async function settles two microtasks after the
  // promise it awaits, per layer. An attempt that succeeds costs one `.then` over the fetch
  // itself; the retry loop is entered only after a failed first attempt. What throws before
  // the call starts still rejects.
  fetch(
    input: string | URL | Request,
    init?: RequestInit,
    options?: CallOptions,
  ): Promise<Response> {
    try {
      return this.#call(new FetchWork(this.#s, input, init), options);
    } catch (error) {
      return rejection(error);
    }
  }

  call<T>(
    fn: (context: DependencyContext) => T | PromiseLike<T>,
    options?: CallOptions,
  ): Promise<T> {
    if (typeof fn !== 'function') {
      return Promise.reject(new SpillwayArgumentError('fn', 'a function', fn));
    }
    try {
      return this.#call(new CallWork(fn), options);
    } catch (error) {
      return rejection(error);
    }
  }

  #call<T>(work: Work<T>, options: CallOptions | undefined): Promise<T> {
    const call = this.#callState(work, options);
    const unlink = call.unlink;
    if (call.signal?.aborted === true) {
      unlink?.();
      return rejection(call.signal.reason);
    }
    const settled = this.#attempt(call, 1);
    // Several caller signals were joined by listeners: they go when the call has settled.
    if (unlink !== undefined) settled.then(unlink, unlink);
    return settled;
  }

  #callState<T>(work: Work<T>, options: CallOptions | undefined): CallState<T> {
    const maxAttempts = work.replayable ? this.#s.maxAttempts : 1;
    if (options === undefined) {
      return {
        work,
        maxAttempts,
        expiresAt: Infinity,
        deadlineSignalled: false,
        signal: work.signal,
        unlink: undefined,
        criticality: 'critical',
        rank: 1,
        idempotent: work.idempotent,
        requested: false,
      };
    }
    if (typeof options !== 'object' || options === null) {
      throw new SpillwayArgumentError('options', 'an options object', options);
    }
    const { signal, criticality = 'critical', deadline, idempotent } = options;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new SpillwayArgumentError('signal', 'an AbortSignal', signal);
    }
    if (!isCriticality(criticality)) {
      throw new SpillwayArgumentError(
        'criticality',
        `one of ${criticalities.join(', ')}`,
        criticality,
      );
    }
    if (idempotent !== undefined && typeof idempotent !== 'boolean') {
      throw new SpillwayArgumentError('idempotent', 'a boolean', idempotent);
    }
    let expiresAt = Infinity;
    let deadlineSignal: AbortSignal | undefined;
    if (typeof deadline === 'number') {
      if (Number.isNaN(deadline) || deadline < 0) {
        throw new SpillwayArgumentError('deadline', 'milliseconds from now (0 or more)', deadline);
      }
      expiresAt = this.#s.clock.now() + deadline;
    } else if (deadline !== undefined) {
      if (
        typeof deadline !== 'object' ||
        deadline === null ||
        typeof deadline.expiresAt !== 'number' ||
        Number.isNaN(deadline.expiresAt)
      ) {
        throw new SpillwayArgumentError(
          'deadline',
          'an object with expiresAt on the clock, or milliseconds from now',
          deadline,
        );
      }
      expiresAt = deadline.expiresAt;
      if (deadline.signal instanceof AbortSignal) deadlineSignal = deadline.signal;
    }
    const joined = joinSignals(signal, work.signal, deadlineSignal);
    return {
      work,
      maxAttempts,
      expiresAt,
      deadlineSignalled: deadlineSignal !== undefined,
      signal: joined?.signal,
      unlink: joined?.unlink,
      criticality,
      rank: criticalityRank(criticality),
      idempotent: idempotent ?? work.idempotent,
      requested: false,
    };
  }

  /**
   * One attempt: deadline → breaker → slot → throttle → the work, with every outcome recorded.
   * Never throws: a failure rejects, or hands the first attempt over to the retry loop.
   */
  #attempt<T>(call: CallState<T>, number: number): Promise<T> {
    const s = this.#s;
    const attempt = newAttempt(call, number);
    let acquired: AcquireResult | Promise<AcquireResult> | undefined;
    try {
      const expiresAt = call.expiresAt;
      if (call.signal?.aborted === true) throw call.signal.reason;
      // Without a deadline the clock is not read at all.
      if (expiresAt !== Infinity && expiresAt <= s.clock.now()) throw new DeadlineExceededError();
      const breaker = s.breaker;
      if (breaker !== undefined) {
        // This dependency's own breaker, closed, lets a call in without a ticket.
        const generation = s.ownBreaker === undefined ? -1 : s.ownBreaker.admitClosed();
        if (generation >= 0) {
          attempt.generation = generation;
        } else {
          const d = breaker.tryAcquire();
          if (!d.ok) {
            throw new CircuitOpenError({ retryAfterMs: d.retryAfterMs, dependency: s.name });
          }
          attempt.ticket = d.call;
        }
      }
      const limiter = s.limiter;
      // A free slot is taken at once (without a permit object when nothing needs one); only a
      // wait in line costs a promise.
      if (limiter.takeSlot()) attempt.slot = true;
      else if (limiter.queued === 0 && limiter.active < limiter.limit) {
        acquired = limiter.tryAcquire();
      } else {
        acquired = limiter.acquire({
          signal: call.signal,
          criticality: call.criticality,
          deadline: expiresAt,
        });
      }
    } catch (error) {
      return this.#failed(attempt, error, call.signal?.aborted === true ? 'caller' : 'local');
    }
    if (acquired instanceof Promise) return acquired.then((a) => this.#granted(attempt, a));
    return this.#granted(attempt, acquired);
  }

  /**
   * The rest of an attempt, once the cap has answered (`undefined`: a slot was taken without a
   * permit). Never throws either.
   */
  #granted<T>(attempt: Attempt<T>, acquired: AcquireResult | undefined): Promise<T> {
    const s = this.#s;
    const clock = s.clock;
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
    const ownThrottle = s.ownThrottle;
    // One reading for the deadline's check, what is left of it and the own throttle's window
    // (the throttle in between takes no time worth counting).
    const now = bounded || ownThrottle !== undefined ? clock.now() : 0;
    if (bounded && expiresAt <= now) {
      // Granted at the very edge of the deadline: too late to send anything.
      return this.#failed(attempt, new DeadlineExceededError(), 'local');
    }
    if (s.throttle !== undefined) {
      const d =
        ownThrottle === undefined
          ? s.throttle.tryRequest(call.criticality)
          : ownThrottle.tryRequestAt(call.rank, now);
      if (!d.ok) return this.#failed(attempt, this.#throttled(d), 'local');
    }
    const deadlineMs = bounded ? expiresAt - now : Infinity;
    const timeoutFirst = s.timeoutMs < deadlineMs;
    const remainingMs = timeoutFirst
      ? s.timeoutMs
      : deadlineMs === Infinity
        ? undefined
        : deadlineMs;
    // A Deadline's own signal already aborts at expiresAt: a timer is needed only for timeoutMs.
    const timerMs = timeoutFirst || !call.deadlineSignalled ? (remainingMs ?? Infinity) : Infinity;
    // Nothing bounds the attempt (no deadline, timeout or caller signal): nothing to wire.
    const scope =
      timerMs === Infinity && call.signal === undefined
        ? unboundedScope
        : new AttemptScope({
            clock,
            callerSignal: call.signal,
            timerMs,
            reason: () =>
              timeoutFirst
                ? new DependencyTimeoutError({
                    timeoutMs: s.timeoutMs,
                    dependency: s.name,
                    attempts: attempt.number,
                  })
                : new DeadlineExceededError(),
          });
    attempt.scope = scope;
    attempt.headers = propagationHeaders({
      names: s.names,
      remainingMs,
      criticality: call.criticality,
      attempt: attempt.number,
    });
    attempt.remainingMs = remainingMs;
    const work = call.work;
    let started: T | PromiseLike<T>;
    try {
      started = work.start(attempt);
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
      settling = work.settle?.(value);
    } catch (error) {
      // Not an answer at all (a fetch that resolved with something not a Response).
      return this.#failed(attempt, error, 'caller');
    }
    // Settled as it stands: an answer that does not count against the dependency.
    if (settling === undefined) {
      this.#end(attempt, 'ok');
      return value;
    }
    return settling.then(
      (v) => {
        this.#end(attempt, work.failed?.(v) === true ? 'bad-answer' : 'ok');
        return v;
      },
      (error: unknown) => this.#failed(attempt, error),
    );
  }

  /** An attempt's work rejected. */
  #faulted<T>(attempt: Attempt<T>, error: unknown): Promise<T> {
    const work = attempt.call.work;
    // Aborted by its own timer or by the caller: `#judge` reads which from the scope.
    if (attempt.scope.fired !== undefined || attempt.call.signal?.aborted === true) {
      return this.#failed(attempt, error);
    }
    if (work.callersOwn?.(error) === true) return this.#failed(attempt, error, 'caller');
    return this.#failed(attempt, work.fault === undefined ? error : work.fault(error));
  }

  /** The error of a request the throttle refused. */
  #throttled(d: { readonly rejectProbability: number }): ThrottledError {
    return new ThrottledError({ rejectProbability: d.rejectProbability, dependency: this.#s.name });
  }

  /**
   * An attempt that failed: records it as `verdict` (or as `#judge` reads the error), frees
   * what it held, and ends it.
   */
  #failed<T>(attempt: Attempt<T>, error: unknown, verdict?: Verdict): Promise<T> {
    let failure = error;
    if (verdict === undefined) [failure, verdict] = this.#judge(attempt, error);
    // A failure of this dependency carries its budget: a retry() around this call that was
    // given none draws from it, so the layers above cannot multiply the attempts.
    if (
      isSpillwayError(failure) &&
      (failure as { dependency?: unknown }).dependency === this.#s.name
    ) {
      carryBudget(failure, this.budget);
    }
    this.#end(attempt, verdict);
    return this.#ended(attempt, failure);
  }

  /** What a failed attempt's error says about the dependency, and the error to raise. */
  #judge(attempt: Attempt<unknown>, error: unknown): [unknown, Verdict] {
    const fired = attempt.scope.fired;
    if (fired !== undefined) {
      // Its own `timeoutMs` says the dependency was too slow; the caller's deadline, which the
      // caller chose (a remote client, even), says nothing about it.
      return [fired, fired instanceof DependencyTimeoutError ? 'failed' : 'caller'];
    }
    const callerSignal = attempt.call.signal;
    // The caller gave up (its signal, or its deadline's): nothing to say about the dependency.
    if (callerSignal?.aborted === true) return [callerSignal.reason, 'caller'];
    if (isLocalRefusal(error)) return [error, 'local'];
    // An ordinary error (the dependency answered, badly), or an overload signal.
    return [error, classifyError(error) === undefined ? 'error' : 'failed'];
  }

  /**
   * Records how an attempt ended with every part it went through — the retry budget, the
   * breaker, the throttle — and frees what it held, whatever those parts throw (a breaker or
   * budget passed in is user code). Once per attempt: every path that ends one comes here.
   */
  #end(attempt: Attempt<unknown>, verdict: Verdict): void {
    const s = this.#s;
    try {
      const call = attempt.call;
      if (!call.requested && verdict !== 'caller') {
        call.requested = true;
        s.budget.recordRequest();
      }
      if (verdict === 'local' || verdict === 'caller') {
        this.#report(attempt, 'ignore');
        return;
      }
      // One reading for the own breaker's and the own throttle's records.
      const now = attempt.generation >= 0 || s.ownThrottle !== undefined ? s.clock.now() : 0;
      this.#report(attempt, verdict === 'ok' ? 'success' : 'failure', now);
      if (verdict === 'ok') s.budget.recordSuccess();
      else if (verdict === 'failed') s.budget.recordFailure();
      this.#answeredBy(call, verdict !== 'failed', now);
    } finally {
      attempt.scope.dispose();
      this.#free(attempt, capOutcomes[verdict]);
    }
  }

  /**
   * Tells the breaker how the attempt ended: through its ticket, or, let in by the own closed
   * breaker, under its generation (`now`, when given, a reading of the dependency's clock).
   */
  #report(attempt: Attempt<unknown>, kind: 'success' | 'failure' | 'ignore', now?: number): void {
    const ticket = attempt.ticket;
    if (ticket !== undefined) {
      if (kind === 'success') ticket.success();
      else if (kind === 'failure') ticket.failure();
      else ticket.ignore();
    } else if (attempt.generation >= 0 && kind !== 'ignore') {
      // Ignoring a call a closed breaker let in changes nothing: nothing to report.
      this.#s.ownBreaker!.reportClosed(attempt.generation, kind, now);
    }
  }

  /** Tells the throttle the dependency took the request, or refused it (`now`: a reading). */
  #answeredBy(call: CallState<unknown>, accepted: boolean, now: number): void {
    const s = this.#s;
    const own = s.ownThrottle;
    if (own !== undefined) {
      if (accepted) own.recordAcceptAt(call.rank, now);
      else own.recordRefusalAt(call.rank, now);
    } else if (s.throttle !== undefined) {
      if (accepted) s.throttle.recordAccept(call.criticality);
      else s.throttle.recordRefusal(call.criticality);
    }
  }

  /** Frees the attempt's place under the cap, once. */
  #free(attempt: Attempt<unknown>, outcome: PermitOutcome): void {
    if (attempt.slot) {
      attempt.slot = false;
      this.#s.limiter.releaseSlot(outcome);
    } else {
      const permit = attempt.permit;
      attempt.permit = undefined;
      permit?.release(outcome);
    }
  }

  /**
   * A failed attempt's end: after a first attempt, when more are allowed, the loop `retry()`
   * runs takes over (it decides whether and when to try again); otherwise a rejection.
   */
  #ended<T>(attempt: Attempt<T>, error: unknown): Promise<T> {
    const call = attempt.call;
    if (attempt.number > 1 || call.maxAttempts <= 1) return rejection(error);
    const s = this.#s;
    return retryAfterFailure(({ attempt: n }) => this.#attempt(call, n), error, {
      maxAttempts: call.maxAttempts,
      budget: this.budget,
      backoff: s.backoff,
      signal: call.signal,
      idempotent: call.idempotent,
      deadline: call.expiresAt,
      dependency: s.name,
      clock: s.clock,
    });
  }
}

/**
 * How an attempt ended, as far as the protections the dependency shares are concerned:
 * - `ok`: it answered, with an answer that is not a failure;
 * - `bad-answer`: it answered with a failure (a 5xx that is not a refusal);
 * - `error`: `call`'s work rejected with an ordinary error (the dependency answered, badly);
 * - `failed`: it refused, outlived the dependency's own `timeoutMs`, or was not reached;
 * - `local`: refused here before anything was sent (own breaker, cap, throttle, deadline);
 * - `caller`: it ended for the caller's own reasons — it gave up, its deadline passed, or its
 *   request was malformed — which say nothing about the dependency. A caller (or a remote
 *   client whose input the caller forwards) cannot trip the breaker, drain the budget, raise
 *   the throttle or shrink an adaptive cap for everyone else.
 *
 * | verdict | breaker | retry budget | throttle | cap |
 * |---|---|---|---|---|
 * | ok | success | success | accept | ok |
 * | bad-answer | failure | – | accept | dropped |
 * | error | failure | – | accept | ignored |
 * | failed | failure | failure | refusal | dropped |
 * | local, caller | – | – | – | ignored |
 *
 * The retry budget counts the call as a request at its first outcome, unless `caller`.
 */
type Verdict = 'ok' | 'bad-answer' | 'error' | 'failed' | 'local' | 'caller';

const capOutcomes: Readonly<Record<Verdict, PermitOutcome>> = {
  ok: 'ok',
  'bad-answer': 'dropped',
  error: 'ignored',
  failed: 'dropped',
  local: 'ignored',
  caller: 'ignored',
};

/**
 * A dependency's `baseUrl`, resolving string inputs against it as `new URL(input, baseUrl)`
 * would; an absolute path (the common case) is joined to the origin without parsing a URL. The
 * last resolution is kept: a call to the same path as the one before passes fetch the very same
 * string, which V8 has flattened once already (a string joined afresh must be flattened again
 * for the URL parser: ~1.3k instructions a call, measured).
 */
class BaseUrl {
  readonly #href: string;
  readonly #origin: string;
  #lastInput: string | undefined;
  #lastUrl = '';

  constructor(url: URL) {
    this.#href = url.href;
    this.#origin = url.origin;
  }

  resolve(input: string): string {
    if (input === this.#lastInput) return this.#lastUrl;
    const url =
      input.charCodeAt(0) === 47 && input.charCodeAt(1) !== 47
        ? this.#origin + input
        : new URL(input, this.#href).href;
    this.#lastInput = input;
    this.#lastUrl = url;
    return url;
  }
}

/** What a throw inside an `async` function would have become: `error`, as a rejection. */
function rejection(error: unknown): Promise<never> {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown
  return Promise.reject(error);
}

/**
 * The init an attempt sends: the caller's, its headers (`base`) with the propagation `fields`
 * on top. A fresh object that nothing else holds, never the caller's and never shared: a fetch
 * wrapper (a tracer's, say) may write to the init it is given.
 */
function attemptInit(
  init: RequestInit | undefined,
  base: HeadersLike | undefined,
  fields: Readonly<Record<string, string>>,
): RequestInit {
  const headers = base === undefined ? fields : mergeHeaders(base, fields);
  return init === undefined ? { headers } : { ...init, headers };
}

/** A short description of a value that should have been a Response, for an error message. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}

function isReplayable(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof URLSearchParams ||
    body instanceof FormData
  );
}

function isBreaker(value: unknown): value is CircuitBreaker {
  return typeof (value as { tryAcquire?: unknown } | null)?.tryAcquire === 'function';
}

function isThrottle(value: unknown): value is AdaptiveThrottle {
  return typeof (value as { tryRequest?: unknown } | null)?.tryRequest === 'function';
}

/** Budget options with the dependency's clock filled in (the ratio policy keeps time). */
function withClock(options: unknown, clock: Clock): unknown {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) return options;
  const o = options as { policy?: unknown; clock?: unknown };
  return o.policy === 'ratio' && o.clock === undefined ? { ...o, clock } : options;
}
