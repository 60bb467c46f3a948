/**
 * `spillway/client`: the caller's side of the backpressure contract. `dependency()` wraps
 * `fetch` (or any call) with a cap on calls in flight, a retry budget shared by every retry
 * layer, full-jitter backoff that honours `Retry-After`, deadline, criticality and attempt
 * propagation, cancellation that releases the socket, a circuit breaker and SRE adaptive
 * throttling — and turns a callee's refusal into the typed error the HTTP guard passes up.
 * The primitives themselves (`retryBudget`, `backoff`, `retry`, `circuitBreaker`,
 * `adaptiveThrottle`) live in `spillway`.
 *
 * @module
 */
export {
  dependency,
  type CallOptions,
  type DeadlineInput,
  type Dependency,
  type DependencyContext,
  type DependencyOptions,
  type DependencyRetryOptions,
  type FetchLike,
} from './dependency.js';
export { refusalOf, maxRefusalBodyBytes, type ResponseRefusal } from './response-signal.js';
