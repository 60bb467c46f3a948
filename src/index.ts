/**
 * Spillway's core: framework-free admission primitives that accept only the work a service can
 * finish. Time comes only from an injected {@link Clock}; nothing here imports `node:http`.
 *
 * Adapters live in subpaths: `spillway/testing` (virtual clock, store conformance),
 * `spillway/redis` (limits shared across replicas). Internals
 * (`src/core/internal`) are not exported.
 *
 * @module
 */
export { systemClock, type Clock, type TimerHandle } from './core/clock/clock.js';
export {
  criticalities,
  criticalityRank,
  defaultCriticality,
  isCriticality,
  type Criticality,
} from './core/criticality/criticality.js';
export { errorCodes, type SpillwayErrorCode } from './core/errors/codes.js';
export {
  SpillwayError,
  isSpillwayError,
  type SpillwayErrorOptions,
} from './core/errors/spillway-error.js';
export { SpillwayConfigError } from './core/errors/config-error.js';
export { SpillwayArgumentError } from './core/errors/argument-error.js';
export { RateLimitedError } from './core/errors/rate-limited-error.js';
export {
  AbortedError,
  DeadlineExceededError,
  QueueFullError,
  QueueTimeoutError,
  RejectedError,
  ShedError,
  rejectionError,
  type RejectedErrorOptions,
  type RejectionReason,
} from './core/errors/rejected-error.js';
export {
  Emitter,
  maxListeners,
  type Event,
  type Listener,
  type Subscription,
} from './core/events/emitter.js';
export {
  tokenBucket,
  type TakeResult,
  type ThrottleEvent,
  type TokenBucket,
  type TokenBucketOptions,
} from './core/token-bucket/token-bucket.js';
export type {
  RateDecision,
  RatePolicy,
  RateRefusalReason,
  RateStore,
} from './core/rate-store/rate-store.js';
export {
  memoryRateStore,
  type MemoryRateStore,
  type MemoryRateStoreOptions,
} from './core/rate-store/memory-rate-store.js';
export {
  keyedTokenBuckets,
  type KeyedThrottleEvent,
  type KeyedTokenBuckets,
  type KeyedTokenBucketsOptions,
} from './core/keyed-token-buckets/keyed-token-buckets.js';
export {
  concurrencyLimit,
  type AcquireEvent,
  type AcquireOptions,
  type AcquireResult,
  type ConcurrencyLimit,
  type ConcurrencyLimitOptions,
  type LimitSource,
  type QueueOrder,
  type RejectEvent,
  type ReleaseEvent,
  type Work,
} from './core/concurrency-limit/concurrency-limit.js';
export type { Permit } from './core/concurrency-limit/permit.js';
export { deadline, type Deadline, type DeadlineOptions } from './core/deadline/deadline.js';
