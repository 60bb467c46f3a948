/**
 * `spillway/redis`: quotas and concurrency shared across replicas, over an ioredis or
 * node-redis client the application already has (neither is a dependency of Spillway).
 * Atomic Lua scripts on Redis's own clock; a deadline per call, a cap on calls in flight and a
 * breaker, so the limiter never becomes the queue; an explicit failure policy. See
 * docs/redis.md.
 *
 * @module
 */
export {
  redisStore,
  type DegradedEvent,
  type RecoveredEvent,
  type RedisStore,
  type RedisStoreStats,
  type StoreErrorEvent,
} from './redis-store.js';
export type { RedisStoreOptions } from './redis-store-options.js';
export type { RateAlgorithm, WindowPolicy } from './rate-ask.js';
export {
  redisConcurrencyLimit,
  type LeaseLostEvent,
  type RedisAcquireOptions,
  type RedisAcquireResult,
  type RedisConcurrencyLimit,
  type RedisRejectionReason,
} from './redis-concurrency-limit.js';
export type { RedisConcurrencyLimitOptions } from './redis-concurrency-limit-options.js';
export type { LeasePermit } from './lease-permit.js';
export type { FailurePolicy } from './failure-policy.js';
export type { FailureKind } from './call-gate.js';
export type { IoredisLike, NodeRedisLike, RedisClientLike } from './script-client.js';
export { StoreUnavailableError } from './store-unavailable-error.js';
export { redisKey } from './keys.js';
export { redisStreamLag, type RedisStreamLagOptions } from './stream-lag.js';
export { redisPenaltyBox, type RedisPenaltyBox } from './redis-penalty-box.js';
export type { RedisPenaltyBoxOptions } from './redis-penalty-box-options.js';
