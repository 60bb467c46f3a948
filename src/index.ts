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
  DependencyOverloadedError,
  retrySignals,
  type DependencyOverloadedErrorOptions,
  type RetrySignal,
} from './core/errors/overloaded-error.js';
export {
  RetryBudgetExhaustedError,
  type RetryBudgetExhaustedErrorOptions,
} from './core/errors/retry-budget-error.js';
export {
  CircuitOpenError,
  type CircuitOpenErrorOptions,
} from './core/errors/circuit-open-error.js';
export { ThrottledError, type ThrottledErrorOptions } from './core/errors/throttled-error.js';
export {
  DependencyTimeoutError,
  type DependencyTimeoutErrorOptions,
} from './core/errors/dependency-timeout-error.js';
export {
  DependencyUnreachableError,
  type DependencyUnreachableErrorOptions,
} from './core/errors/unreachable-error.js';
export {
  WaitLineFullError,
  type WaitLineFullErrorOptions,
} from './core/errors/wait-line-full-error.js';
export { GateClosedError, type GateClosedReason } from './core/errors/gate-closed-error.js';
export {
  BacklogFullError,
  type BacklogFullErrorOptions,
  type BacklogRefusedBy,
} from './core/errors/backlog-full-error.js';
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
export type { TakeOptions } from './core/token-bucket/take-waiting.js';
export {
  creditGate,
  type CreditGate,
  type CreditGateOptions,
  type CreditGateState,
  type SendOptions,
} from './core/credit-gate/credit-gate.js';
export type {
  RateDecision,
  RateKeyState,
  RatePolicy,
  RateRefusalReason,
  RateStore,
  StoreAnswer,
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
export type { Permit, PermitOutcome } from './core/concurrency-limit/permit.js';
export type { LimitSample } from './core/concurrency-limit/limit-source.js';
export type { PartitionShares } from './core/concurrency-limit/partitions.js';
export type {
  AdaptiveLimit,
  LimitBoundsOptions,
  LimitChangeEvent,
} from './core/adaptive-limit/adaptive-limit.js';
export type { WindowOptions } from './core/adaptive-limit/sample-window.js';
export { aimdLimit, type AimdLimitOptions } from './core/adaptive-limit/aimd-limit.js';
export { vegasLimit, type VegasLimitOptions } from './core/adaptive-limit/vegas-limit.js';
export { gradientLimit, type GradientLimitOptions } from './core/adaptive-limit/gradient-limit.js';
export { deadline, type Deadline, type DeadlineOptions } from './core/deadline/deadline.js';
export {
  currentContext,
  outsideContext,
  runInContext,
  type AmbientContext,
} from './core/ambient-context/ambient-context.js';
export {
  penaltyBox,
  type LiftWhenOptions,
  type PenaltyBox,
  type PenaltyBoxLike,
  type PenaltyBoxOptions,
  type PenaltyStep,
  type PenaltyStepEvent,
  type PenaltyVerdict,
} from './core/penalty-box/penalty-box.js';
export {
  retryBudget,
  isRetryBudget,
  type RatioRetryBudgetOptions,
  type RetryBudget,
  type RetryBudgetExhaustedEvent,
  type RetryBudgetOptions,
  type RetryBudgetPolicy,
  type TokenRetryBudgetOptions,
} from './core/retry-budget/retry-budget.js';
export { carryBudget, budgetCarriedBy } from './core/retry-budget/carried-budget.js';
export {
  backoff,
  type Backoff,
  type BackoffDecision,
  type BackoffInput,
  type BackoffOptions,
} from './core/backoff/backoff.js';
export {
  retry,
  maxAttemptsLimit,
  type RetryContext,
  type RetryEvent,
  type RetryOptions,
} from './core/retry/retry.js';
export {
  classifyError,
  isLocalRefusal,
  isUnsentNetworkError,
  type RetryClass,
} from './core/retry/classify.js';
export {
  circuitBreaker,
  type BreakerCall,
  type BreakerDecision,
  type BreakerRunOptions,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitBreakerState,
  type CircuitState,
  type StateChangeEvent,
} from './core/circuit-breaker/circuit-breaker.js';
export type {
  ConsecutiveTrip,
  CountTrip,
  TimeTrip,
  TripPolicy,
  TripSnapshot,
} from './core/circuit-breaker/trip-policy.js';
export {
  adaptiveThrottle,
  type AdaptiveThrottle,
  type AdaptiveThrottleOptions,
  type ThrottleDecision,
  type ThrottleRejectEvent,
} from './core/adaptive-throttle/adaptive-throttle.js';
export {
  lagGate,
  type AdmitOptions,
  type AdmitResult,
  type LagGate,
  type LagGateOptions,
  type LagReadContext,
  type LagReading,
  type LagRefusalReason,
  type ReadLag,
  type StalePolicy,
} from './core/lag-gate/lag-gate.js';
