/**
 * The public shapes of `spillway/client`: a dependency's options, a call's options, what
 * `call`'s function receives, and the dependency itself.
 *
 * @module
 */
import type {
  AdaptiveThrottle,
  AdaptiveThrottleOptions,
  Backoff,
  BackoffOptions,
  CircuitBreaker,
  CircuitBreakerOptions,
  Clock,
  ConcurrencyLimit,
  Criticality,
  LimitSource,
  RetryBudget,
  RetryBudgetOptions,
  TokenBucket,
} from '../index.js';
import type { HeaderNames } from '../http/index.js';

/**
 * The codes of the failures a fallback may stand in for: the dependency's refusals and
 * failures, and the refusals made here on its behalf. Never the caller's own doing (its abort,
 * its deadline, a bad argument), which no fallback answers.
 */
export type FallbackCode =
  | 'SPILLWAY_E_OVERLOADED'
  | 'SPILLWAY_E_RETRY_BUDGET'
  | 'SPILLWAY_E_CIRCUIT_OPEN'
  | 'SPILLWAY_E_THROTTLED'
  | 'SPILLWAY_E_DEPENDENCY_TIMEOUT'
  | 'SPILLWAY_E_UNREACHABLE'
  | 'SPILLWAY_E_QUEUE_FULL'
  | 'SPILLWAY_E_QUEUE_TIMEOUT'
  | 'SPILLWAY_E_SHED'
  | 'SPILLWAY_E_RATE_LIMITED'
  | 'SPILLWAY_E_WAIT_LINE_FULL';

/** A dependency's fallback: which failures it answers, and `fetch`'s answer to them. */
export interface DependencyFallback {
  /**
   * Which failures fall back: their codes, or a predicate over the error (asked only about
   * failures that are not the caller's own; a `call` function's ordinary rejection reaches
   * it, and no code names that).
   */
  readonly on: readonly FallbackCode[] | ((error: unknown) => boolean);
  /**
   * What `fetch` resolves with instead of such a failure, given the error. `call` has no
   * default answer (its values are the caller's type): pass `{ fallback }` per call. Without
   * it, only calls that pass their own fall back.
   */
  readonly value?: ((error: unknown) => Response | PromiseLike<Response>) | undefined;
}

/** A function with `fetch`'s shape: the global one, undici's, or any compatible wrapper. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Retry settings of a dependency. */
export interface DependencyRetryOptions {
  /** Attempts in all, the first included: 1 to 5. @default 3 */
  readonly maxAttempts?: number;
  /** A backoff, or options for the full-jitter one. @default backoff() (100 ms base, 1 s cap) */
  readonly backoff?: Backoff | BackoffOptions;
}

/** Options of `dependency()`. */
export interface DependencyOptions {
  /** The callee's name, carried by every error. Required. */
  readonly name: string;
  /**
   * Most calls in flight at once: a positive integer or an object whose `current` is read on
   * every decision (adaptive limits). @default 64
   */
  readonly limit?: number | LimitSource;
  /** Most calls waiting for a slot (and, when paced, for a token); more are refused at once. @default 64 */
  readonly maxQueue?: number;
  /** Longest wait for a slot, in ms (the deadline, if shorter, wins). @default 1_000 */
  readonly maxQueueWaitMs?: number;
  /**
   * Paces attempts to this many per second (a third-party API's published rate): each attempt,
   * retries included, takes a token from a bucket of `burst` before it takes a slot, waiting
   * in line (in arrival order) as long as `maxQueueWaitMs` and the deadline allow; a wait that
   * would outlast them is refused at once with `RateLimitedError`. @default undefined (not paced)
   */
  readonly ratePerSec?: number | undefined;
  /** With `ratePerSec`: attempts that may go at once after a quiet spell. @default 1 */
  readonly burst?: number | undefined;
  /** Retry settings, or `false` for a single attempt. @default { maxAttempts: 3 } */
  readonly retry?: DependencyRetryOptions | false;
  /**
   * Statuses (400–599) of an answer to an idempotent `fetch` that are retried as a failure is
   * (within `maxAttempts`, the budget and the deadline), e.g. `[502, 504]` from a gateway. An
   * answer that cannot be retried is returned as it is. Refusals (429, 503, a
   * `Spillway-Retry` signal) are retried whether listed or not. @default [] (none)
   */
  readonly retryOn?: readonly number[];
  /**
   * Answers chosen failures with a value instead of an error (see {@link DependencyFallback}).
   * Never for the caller's own doing: a malformed request, its abort, its spent deadline.
   * @default undefined (every failure rejects)
   */
  readonly fallback?: DependencyFallback | undefined;
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
  /**
   * Whether the throttle may refuse a call's first attempt too, as the SRE rule does, or only
   * its retries. Refusing first attempts pays where this client's calls are the dependency's
   * load (every caller throttles, so each keeps its share); where other callers do not
   * throttle, it only hands this client's share to them, so by default a call's first attempt
   * always goes (the breaker and the cap still apply) and the throttle prunes retries.
   * @default false
   */
  readonly throttleFirstAttempts?: boolean;
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
  /**
   * Whether a call made inside a guarded request (or any `runInContext`) takes the deadline
   * and the criticality it does not give from that request, so they reach the next hop with
   * no code in the handler; an option the call gives still wins. `false`: only what each call
   * gives. @default true
   */
  readonly ambientContext?: boolean;
}

/** A deadline: anything with `expiresAt` on the dependency's clock (a `Deadline` too), or ms from now. */
export type DeadlineInput =
  number | { readonly expiresAt: number; readonly signal?: AbortSignal | undefined };

/** Options of one call (`T`: what the call resolves with). */
export interface CallOptions<T = unknown> {
  /** The caller's signal: aborting cancels the call, its wait and its retries. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Whether the work may safely run twice. `fetch`: by default true for GET, HEAD, OPTIONS,
   * TRACE, PUT and DELETE. `call`: false by default.
   */
  readonly idempotent?: boolean | undefined;
  /**
   * How important the call is; sent as `Spillway-Criticality`.
   * @default the ambient request's, else 'critical'
   */
  readonly criticality?: Criticality | undefined;
  /**
   * When the caller stops caring: an object with `expiresAt` on the dependency's clock (such as
   * a `Deadline` or the incoming request's), or a number of milliseconds from now. Unlike
   * `concurrencyLimit`'s `acquire({ deadline })`, a number here is relative.
   * @default the ambient request's (with its signal), else none
   */
  readonly deadline?: DeadlineInput | undefined;
  /**
   * This call's answer to a failure the dependency's `fallback.on` chooses, given the error
   * (instead of `fallback.value`); `false`: none for this call. Needs a dependency made with
   * `fallback`. @default the dependency's `fallback.value` (for `fetch`)
   */
  readonly fallback?: ((error: unknown) => T | PromiseLike<T>) | false | undefined;
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
    options?: CallOptions<Response>,
  ): Promise<Response>;
  /** Any call (a database, a gRPC stub…) with the same obligations. */
  call<T>(
    fn: (context: DependencyContext) => T | PromiseLike<T>,
    options?: CallOptions<T>,
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
  /** The bucket pacing attempts, with `ratePerSec`. */
  readonly pace: TokenBucket | undefined;
  /** Calls in flight now. */
  readonly active: number;
  /** Calls waiting for a slot now. */
  readonly queued: number;
}
