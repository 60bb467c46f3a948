/**
 * What a component that builds a core primitive may drive beyond its public API: the same
 * primitives, typed for their owner, which shares their clock and so may pass its own readings
 * (`dependency()` builds its cap, breaker and throttle this way), and the retry loop entered
 * after a first attempt has already failed. Internal: not exported from the package; the one
 * door through which `src/client` (and the node guard's line) reach into core.
 *
 * @module
 */
export {
  ownedAdaptiveThrottle,
  type OwnedAdaptiveThrottle,
} from '../adaptive-throttle/adaptive-throttle.js';
export {
  ownedCircuitBreaker,
  type OwnedCircuitBreaker,
} from '../circuit-breaker/circuit-breaker.js';
export {
  ownedConcurrencyLimit,
  type OwnedConcurrencyLimit,
} from '../concurrency-limit/concurrency-limit.js';
export { retryAfterFailure } from '../retry/retry.js';
export { rejectSoon } from './reject-soon.js';
