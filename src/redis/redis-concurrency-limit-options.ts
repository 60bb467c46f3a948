/**
 * The Redis concurrency limit's options: what each means, its default, and the check that
 * turns them into the settings a limit is built from (a bad option fails here, at
 * construction, naming the option and the value).
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';
import type { FailurePolicy } from './failure-policy.js';
import type { RedisStore } from './redis-store.js';
import { storeInternals, type StoreInternals } from './store-internals.js';
import {
  nonNegativeInteger,
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from './validate.js';

/** Options of {@link redisConcurrencyLimit}. */
export interface RedisConcurrencyLimitOptions {
  /** The store whose client, prefix, deadline and breaker this limit uses. Required. */
  readonly store: RedisStore;
  /** Names the semaphore; part of its keys. Required. */
  readonly name: string;
  /** Most weight held at once across every replica (per `key`). Required. */
  readonly limit: number;
  /** A lease's life without renewal, in ms; outlive your longest GC pause. @default 30_000 */
  readonly leaseTtlMs?: number;
  /** How often held leases are renewed, in ms. @default leaseTtlMs / 3 */
  readonly renewEveryMs?: number;
  /** Most callers waiting in this process; 0 refuses at once. @default 0 */
  readonly maxQueue?: number;
  /** Longest a caller waits in line, in ms. @default 1_000 */
  readonly maxQueueWaitMs?: number;
  /** Longest pause between polls of Redis while waiting, in ms (jittered). @default 25 */
  readonly pollMs?: number;
  /** Failure policy for this limit (`local`: limit ÷ replicas here). @default the store's */
  readonly onError?: FailurePolicy;
}

/** A limit's checked options. */
export interface LimitSettings {
  readonly name: string;
  readonly limit: number;
  readonly leaseTtlMs: number;
  readonly renewEveryMs: number;
  readonly maxQueue: number;
  readonly maxQueueWaitMs: number;
  readonly pollMs: number;
  readonly policy: FailurePolicy;
}

/** `options` checked and defaulted, with the internals of the store they name. */
export function limitSettings(options: RedisConcurrencyLimitOptions): {
  readonly store: StoreInternals;
  readonly settings: LimitSettings;
} {
  const o = optionsObject('redisConcurrencyLimit options', options);
  const store = storeInternals(o.store);
  if (store === undefined) {
    throw new SpillwayConfigError('store', 'a store made by redisStore()', o.store);
  }
  if (typeof o.name !== 'string' || o.name.length === 0) {
    throw new SpillwayConfigError('name', 'a non-empty string', o.name);
  }
  const leaseTtlMs = positiveInteger('leaseTtlMs', o.leaseTtlMs ?? 30_000);
  const renewEveryMs = positiveNumber('renewEveryMs', o.renewEveryMs ?? leaseTtlMs / 3);
  if (renewEveryMs >= leaseTtlMs) {
    throw new SpillwayConfigError(
      'renewEveryMs',
      `less than leaseTtlMs (${leaseTtlMs})`,
      renewEveryMs,
    );
  }
  return {
    store,
    settings: {
      name: o.name,
      limit: positiveInteger('limit', o.limit),
      leaseTtlMs,
      renewEveryMs,
      maxQueue: nonNegativeInteger('maxQueue', o.maxQueue ?? 0),
      maxQueueWaitMs: positiveNumber('maxQueueWaitMs', o.maxQueueWaitMs ?? 1_000),
      pollMs: positiveNumber('pollMs', o.pollMs ?? 25),
      policy: oneOf('onError', o.onError ?? store.policy, ['open', 'closed', 'local']),
    },
  };
}
