/**
 * A concurrency limit with a line bounded by count and by time. A released slot passes
 * straight to the next waiter (nobody jumps the line); aborted waiters leave at once with
 * their listeners removed; a waiter that could not start before its deadline is refused at the
 * door; a full line makes room for more critical work by shedding the least critical.
 *
 * @module
 */
import { systemClock } from '../clock/clock.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import {
  clockLike,
  nonNegativeInteger,
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';
import type { LimitSource } from './limit-source.js';
import { Limiter } from './limiter.js';
import { Partitions } from './partitions.js';
import type { ConcurrencyLimit, ConcurrencyLimitOptions, OwnedConcurrencyLimit } from './types.js';

export type { LimitSample, LimitSource } from './limit-source.js';
export type { PartitionShares } from './partitions.js';
export type {
  AcquireEvent,
  AcquireOptions,
  AcquireResult,
  ConcurrencyLimit,
  ConcurrencyLimitOptions,
  OwnedConcurrencyLimit,
  QueueOrder,
  RejectEvent,
  ReleaseEvent,
  Work,
} from './types.js';

const defaults = {
  maxQueue: 0,
  maxQueueWaitMs: 1_000,
  order: 'fifo',
  codelTargetMs: 5,
  codelIntervalMs: 100,
} as const satisfies Partial<ConcurrencyLimitOptions>;

/**
 * Creates a concurrency limit.
 *
 * @example
 * const db = concurrencyLimit({ limit: 10, maxQueue: 10, maxQueueWaitMs: 50 });
 * const r = await db.acquire({ signal });
 * if (!r.ok) return reply503(r.retryAfterMs);
 * try { await query({ signal }); } finally { r.permit.release(); }
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): ConcurrencyLimit {
  return ownedConcurrencyLimit(options);
}

/** {@link concurrencyLimit}, typed for the component that owns it. */
export function ownedConcurrencyLimit(options: ConcurrencyLimitOptions): OwnedConcurrencyLimit {
  const o = optionsObject('concurrencyLimit options', options);
  const limit = o.limit;
  let fixed = -1;
  let source: LimitSource | undefined;
  if (typeof limit === 'number') fixed = positiveInteger('limit', limit);
  else if (typeof limit === 'object' && limit !== null && typeof limit.current === 'number') {
    source = limit;
  } else {
    throw new SpillwayConfigError(
      'limit',
      'a positive integer or an object with a numeric `current`',
      limit,
    );
  }
  const codelTargetMs = positiveNumber('codelTargetMs', o.codelTargetMs ?? defaults.codelTargetMs);
  const codelIntervalMs = positiveNumber(
    'codelIntervalMs',
    o.codelIntervalMs ?? defaults.codelIntervalMs,
  );
  if (codelTargetMs >= codelIntervalMs) {
    throw new SpillwayConfigError(
      'codelTargetMs',
      `less than codelIntervalMs (${codelIntervalMs})`,
      codelTargetMs,
    );
  }
  return new Limiter({
    fixed,
    source,
    sampler: typeof source?.onSample === 'function' ? source : undefined,
    partitions: Partitions.from(o.partitions),
    maxQueue: nonNegativeInteger('maxQueue', o.maxQueue ?? defaults.maxQueue),
    maxQueueWaitMs: positiveNumber('maxQueueWaitMs', o.maxQueueWaitMs ?? defaults.maxQueueWaitMs),
    order: oneOf('order', o.order ?? defaults.order, ['fifo', 'lifo', 'adaptive']),
    codelTargetMs,
    codelIntervalMs,
    clock: clockLike('clock', o.clock ?? systemClock),
  });
}
