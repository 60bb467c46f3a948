/**
 * `spillway/client`: the caller's side of the backpressure contract. `dependency()` wraps
 * `fetch` (or any call) with a cap on calls in flight, a retry budget shared by every retry
 * layer, full-jitter backoff that honours `Retry-After`, deadline, criticality and attempt
 * propagation, cancellation that releases the socket, a circuit breaker and SRE adaptive
 * throttling — and turns a callee's refusal into the typed error the HTTP guard passes up.
 * Inside a guarded request a call takes the request's deadline and criticality by itself (the
 * ambient context: `currentContext`, `runInContext`, `outsideContext`, also exported here).
 * The primitives it is built from (`retryBudget`, `backoff`, `retry`, `circuitBreaker`,
 * `adaptiveThrottle`) and every error a dependency throws — its own, the cap's and the
 * deadline's refusals, and the bad-option and bad-argument errors — are exported here too: the
 * same objects as `spillway`'s, so either import works and `instanceof` holds across them.
 *
 * @module
 */
export {
  dependency,
  type CallOptions,
  type DeadlineInput,
  type Dependency,
  type DependencyContext,
  type DependencyFallback,
  type DependencyOptions,
  type DependencyRetryOptions,
  type FallbackCode,
  type FetchLike,
} from './dependency.js';
export { refusalOf, maxRefusalBodyBytes, type ResponseRefusal } from './response-signal.js';

// The caller-side primitives and errors, re-exported from the core (one copy, two doors).
export {
  adaptiveThrottle,
  backoff,
  circuitBreaker,
  classifyError,
  currentContext,
  isRetryBudget,
  outsideContext,
  retry,
  retryBudget,
  runInContext,
  CircuitOpenError,
  DeadlineExceededError,
  DependencyOverloadedError,
  DependencyTimeoutError,
  DependencyUnreachableError,
  QueueFullError,
  QueueTimeoutError,
  RateLimitedError,
  RetryBudgetExhaustedError,
  ShedError,
  SpillwayArgumentError,
  SpillwayConfigError,
  ThrottledError,
  WaitLineFullError,
  type AdaptiveThrottle,
  type AdaptiveThrottleOptions,
  type AmbientContext,
  type Backoff,
  type BackoffOptions,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitBreakerState,
  type RetryBudget,
  type RetryBudgetOptions,
  type RetryOptions,
  type RetrySignal,
} from '../index.js';
