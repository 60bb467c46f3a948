/**
 * The Redis store's options: what each means, its default (in one place), and the check that
 * turns them into the settings a store is built from. A bad option fails here, at
 * construction, naming the option and the value.
 *
 * @module
 */
import type { Clock } from '../core/clock/clock.js';
import { systemClock } from '../core/clock/clock.js';
import { warnIfClientResends } from './client-warning.js';
import { RateFallback, type FailurePolicy } from './failure-policy.js';
import { DenyCache, LeaseTable } from './local-quota-cache.js';
import type { RateAlgorithm } from './rate-ask.js';
import { scriptClient, type RedisClientLike, type ScriptClient } from './script-client.js';
import {
  clockLike,
  integerInRange,
  keyPrefix,
  nonNegativeInteger,
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from './validate.js';

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /** An ioredis or node-redis client (or cluster) the application already has. Required. */
  readonly client: RedisClientLike;
  /** First part of every key (no braces). @default 'spillway' */
  readonly prefix?: string;
  /** Longest wait for one Redis call, in ms, enforced on `clock`. @default 100 */
  readonly timeoutMs?: number;
  /**
   * The answer when Redis cannot give one: `open` admits, `closed` refuses
   * (`reason: 'store-unavailable'`), `local` enforces limit ÷ `replicas` in memory.
   * @default 'open'
   */
  readonly onError?: FailurePolicy;
  /** Replicas sharing the limits (sizes `local` shares and lease batches). @default 1 */
  readonly replicas?: number;
  /** Most Redis calls waiting at once in this process; past it the policy answers. @default 1_000 */
  readonly maxInFlight?: number;
  /** Failed calls in a row that stop calling Redis for a cool-down. @default 5 */
  readonly breakerFailures?: number;
  /** Ms without calls before one probe checks Redis again. @default 250 */
  readonly breakerCooldownMs?: number;
  /**
   * Most lease releases and renewals waiting for the client to be ready again; past it the
   * oldest is dropped (its lease then expires by its TTL) and `onStoreError` says `dropped`.
   * @default 10_000
   */
  readonly cleanupMaxQueue?: number;
  /** What `take` runs; windows last `burst / ratePerSec` seconds. @default 'gcra' */
  readonly algorithm?: RateAlgorithm;
  /** Keys in the deny cache; 0 turns it off. @default 10_000 */
  readonly denyCacheMaxKeys?: number;
  /** Longest a cached refusal is trusted, in ms. @default 1_000 */
  readonly denyCacheMaxAgeMs?: number;
  /**
   * Most decisions (or lease acquires) made in one tick that go to Redis as one call; 1 sends
   * each on its own. Larger batches cost Redis less per decision; smaller ones answer sooner
   * when Redis keeps up, and on Node 24 with ioredis they spare the process long scavenges at
   * tens of thousands of decisions a second (docs/redis.md, "Fewer round trips").
   * @default 16
   */
  readonly maxBatchItems?: number;
  /** Tokens a hot key may lease per round trip; 1 turns leasing off. @default 1 */
  readonly leaseMaxBatch?: number;
  /** Longest leased tokens are spent locally, in ms (bounds the overshoot). @default 50 */
  readonly leaseMaxHoldMs?: number;
  /** Keys kept by the lease table and by `local` fallback state. @default 10_000 */
  readonly maxKeys?: number;
  /** Where local time and timers come from (never used for limits). @default systemClock */
  readonly clock?: Clock;
}

/** A store's checked options, with the local caches they call for already built. */
export interface StoreSettings {
  readonly client: ScriptClient;
  readonly clock: Clock;
  readonly policy: FailurePolicy;
  readonly replicas: number;
  readonly prefix: string;
  readonly timeoutMs: number;
  readonly maxInFlight: number;
  readonly breakerFailures: number;
  readonly breakerCooldownMs: number;
  readonly cleanupMaxQueue: number;
  readonly maxBatchItems: number;
  readonly algorithm: RateAlgorithm;
  readonly deny: DenyCache | undefined;
  readonly leases: LeaseTable | undefined;
  readonly fallback: RateFallback;
}

/**
 * The most `maxBatchItems` may be: Redis runs a batch as one script, holding its event loop
 * for all of it, so a batch stays short.
 */
const maxBatchItemsCap = 64;

const defaults = {
  prefix: 'spillway',
  timeoutMs: 100,
  onError: 'open',
  replicas: 1,
  maxInFlight: 1_000,
  breakerFailures: 5,
  breakerCooldownMs: 250,
  cleanupMaxQueue: 10_000,
  maxBatchItems: 16,
  algorithm: 'gcra',
  denyCacheMaxKeys: 10_000,
  denyCacheMaxAgeMs: 1_000,
  leaseMaxBatch: 1,
  leaseMaxHoldMs: 50,
  maxKeys: 10_000,
} as const satisfies Partial<RedisStoreOptions>;

/**
 * `options` checked and defaulted (a `SpillwayConfigError` naming the first bad one), and a
 * process warning, once, if the client would queue or re-send commands.
 */
export function storeSettings(options: RedisStoreOptions): StoreSettings {
  const o = optionsObject('redisStore options', options);
  const client = scriptClient('client', o.client);
  warnIfClientResends(o.client as object); // an object: scriptClient has checked it
  const clock = clockLike('clock', o.clock ?? systemClock);
  const policy = oneOf('onError', o.onError ?? defaults.onError, ['open', 'closed', 'local']);
  const replicas = positiveInteger('replicas', o.replicas ?? defaults.replicas);
  const maxKeys = positiveInteger('maxKeys', o.maxKeys ?? defaults.maxKeys);
  const denyKeys = nonNegativeInteger(
    'denyCacheMaxKeys',
    o.denyCacheMaxKeys ?? defaults.denyCacheMaxKeys,
  );
  const denyAge = positiveNumber(
    'denyCacheMaxAgeMs',
    o.denyCacheMaxAgeMs ?? defaults.denyCacheMaxAgeMs,
  );
  const maxBatch = positiveInteger('leaseMaxBatch', o.leaseMaxBatch ?? defaults.leaseMaxBatch);
  const maxHoldMs = positiveNumber('leaseMaxHoldMs', o.leaseMaxHoldMs ?? defaults.leaseMaxHoldMs);
  return {
    client,
    clock,
    policy,
    replicas,
    prefix: keyPrefix('prefix', o.prefix ?? defaults.prefix),
    timeoutMs: positiveNumber('timeoutMs', o.timeoutMs ?? defaults.timeoutMs),
    maxInFlight: positiveInteger('maxInFlight', o.maxInFlight ?? defaults.maxInFlight),
    breakerFailures: positiveInteger(
      'breakerFailures',
      o.breakerFailures ?? defaults.breakerFailures,
    ),
    breakerCooldownMs: positiveNumber(
      'breakerCooldownMs',
      o.breakerCooldownMs ?? defaults.breakerCooldownMs,
    ),
    cleanupMaxQueue: positiveInteger(
      'cleanupMaxQueue',
      o.cleanupMaxQueue ?? defaults.cleanupMaxQueue,
    ),
    maxBatchItems: integerInRange('maxBatchItems', o.maxBatchItems ?? defaults.maxBatchItems, [
      1,
      maxBatchItemsCap,
    ]),
    algorithm: oneOf('algorithm', o.algorithm ?? defaults.algorithm, [
      'gcra',
      'fixed-window',
      'sliding-window',
    ]),
    deny: denyKeys > 0 ? new DenyCache(denyKeys, denyAge) : undefined,
    leases: maxBatch > 1 ? new LeaseTable({ maxKeys, maxBatch, maxHoldMs, replicas }) : undefined,
    fallback: new RateFallback({ policy, replicas, clock, maxKeys }),
  };
}
