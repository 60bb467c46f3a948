/**
 * A dependency's options, checked and settled once at construction: the documented defaults
 * filled in, every option validated by name, and the parts the dependency builds itself (cap,
 * breaker, throttle, budget) made on its clock.
 *
 * @module
 */
import {
  backoff as makeBackoff,
  isRetryBudget,
  maxAttemptsLimit,
  retryBudget,
  SpillwayConfigError,
  systemClock,
  tokenBucket,
  type AdaptiveThrottle,
  type Backoff,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type Clock,
  type RetryBudget,
  type RetryBudgetOptions,
  type TokenBucket,
} from '../index.js';
import { declareAmbientReader } from '../core/ambient-context/ambient-context.js';
import { headerNamesOf, type HeaderNames } from '../http/index.js';
import {
  ownedAdaptiveThrottle,
  ownedCircuitBreaker,
  ownedConcurrencyLimit,
  type OwnedConcurrencyLimit,
} from '../core/internal/owned.js';
import { BaseUrl } from './base-url.js';
import { fallbackOf, retryOnOf, type FallbackSettings } from './fallback.js';
import { breakerGate, throttleGate, type BreakerGate, type ThrottleGate } from './gates.js';
import type { DependencyOptions, FetchLike } from './types.js';

/** Everything a dependency's calls read, settled at construction. */
export interface Settings {
  readonly name: string;
  readonly clock: Clock;
  readonly limiter: OwnedConcurrencyLimit;
  /** The bucket pacing attempts (`ratePerSec`), and the longest wait for one of its tokens. */
  readonly pace: TokenBucket | undefined;
  readonly maxPaceWaitMs: number;
  readonly maxAttempts: number;
  readonly backoff: Backoff;
  readonly budget: RetryBudget;
  readonly breaker: CircuitBreaker | undefined;
  readonly breakerGate: BreakerGate | undefined;
  readonly throttle: AdaptiveThrottle | undefined;
  readonly throttleGate: ThrottleGate | undefined;
  /** Whether the throttle stands in a first attempt's way too, not only a retry's. */
  readonly throttleFirstAttempts: boolean;
  /** Whether recording an attempt's end needs a reading of the clock (a part built here). */
  readonly recordsAtNow: boolean;
  readonly timeoutMs: number;
  readonly fetch: FetchLike;
  readonly baseUrl: BaseUrl | undefined;
  readonly names: HeaderNames;
  /** Whether calls take the deadline and criticality they do not give from the ambient context. */
  readonly ambient: boolean;
  /** Statuses of an idempotent fetch's answer retried as failures; undefined for none. */
  readonly retryOn: ReadonlySet<number> | undefined;
  readonly fallback: FallbackSettings | undefined;
}

const defaults = {
  limit: 64,
  maxQueue: 64,
  maxQueueWaitMs: 1_000,
  maxAttempts: 3,
  breaker: {
    trip: { kind: 'time', windowMs: 30_000, minimumCalls: 20, failureRatio: 0.5 },
  } satisfies CircuitBreakerOptions,
} as const;

/** Checks `options` and settles them; throws `SpillwayConfigError` naming a bad option. */
export function settingsOf(options: DependencyOptions): Settings {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SpillwayConfigError('dependency options', 'an options object', options);
  }
  const o = options;
  if (typeof o.name !== 'string' || o.name.length === 0) {
    throw new SpillwayConfigError('name', 'a non-empty string', o.name);
  }
  const clock = o.clock ?? systemClock;
  const limiter = ownedConcurrencyLimit({
    limit: o.limit ?? defaults.limit,
    maxQueue: o.maxQueue ?? defaults.maxQueue,
    maxQueueWaitMs: o.maxQueueWaitMs ?? defaults.maxQueueWaitMs,
    clock,
  });
  const pace = paceOf(o, clock);
  const { maxAttempts, backoff } = retryOf(o.retry);
  const budget = isRetryBudget(o.budget)
    ? o.budget
    : retryBudget(withClock(o.budget, clock) as RetryBudgetOptions | undefined);
  for (const key of ['breaker', 'throttle'] as const) {
    const value = o[key];
    if (value !== undefined && value !== false && (typeof value !== 'object' || value === null)) {
      throw new SpillwayConfigError(key, `a ${key}, options for one, or false`, value);
    }
  }
  // A breaker and a throttle built here keep this dependency's clock, so one reading serves
  // both; one passed in keeps its own clock and is driven through its public methods.
  const ownBreaker = o.breaker !== false && !isBreaker(o.breaker);
  const breaker =
    o.breaker === false
      ? undefined
      : ownBreaker
        ? // Options tune the documented default, never replace it: `{ openMs }` keeps its trip.
          ownedCircuitBreaker({ ...defaults.breaker, ...o.breaker, name: o.name, clock })
        : o.breaker;
  const ownThrottle = o.throttle !== false && !isThrottle(o.throttle);
  const throttle =
    o.throttle === false
      ? undefined
      : ownThrottle
        ? ownedAdaptiveThrottle({ ...(o.throttle ?? {}), clock })
        : o.throttle;
  const throttleFirstAttempts = o.throttleFirstAttempts ?? false;
  if (typeof throttleFirstAttempts !== 'boolean') {
    throw new SpillwayConfigError('throttleFirstAttempts', 'true or false', throttleFirstAttempts);
  }
  let timeoutMs = Infinity;
  if (o.timeoutMs !== undefined) {
    if (typeof o.timeoutMs !== 'number' || !(o.timeoutMs > 0) || !Number.isFinite(o.timeoutMs)) {
      throw new SpillwayConfigError('timeoutMs', 'a finite number greater than 0', o.timeoutMs);
    }
    timeoutMs = o.timeoutMs;
  }
  const fetchFn = o.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') {
    throw new SpillwayConfigError('fetch', 'a fetch-compatible function', fetchFn);
  }
  const ambient = o.ambientContext ?? true;
  if (typeof ambient !== 'boolean') {
    throw new SpillwayConfigError('ambientContext', 'true or false', ambient);
  }
  // A dependency that reads the context is what makes guards enter it (see ambient-context.ts).
  if (ambient) declareAmbientReader();
  const bGate = breaker === undefined ? undefined : breakerGate(breaker, ownBreaker);
  const tGate = throttle === undefined ? undefined : throttleGate(throttle, ownThrottle);
  return {
    name: o.name,
    clock,
    limiter,
    pace,
    maxPaceWaitMs: o.maxQueueWaitMs ?? defaults.maxQueueWaitMs,
    maxAttempts,
    backoff,
    budget,
    breaker,
    breakerGate: bGate,
    throttle,
    throttleGate: tGate,
    throttleFirstAttempts,
    recordsAtNow: bGate?.readsClock === true || tGate?.readsClock === true,
    timeoutMs,
    fetch: fetchFn,
    baseUrl: baseUrlOf(o.baseUrl),
    names: headerNamesOf(o.headerNames),
    ambient,
    retryOn: retryOnOf(o.retryOn, maxAttempts),
    fallback: fallbackOf(o.fallback),
  };
}

/**
 * The bucket pacing attempts, from `ratePerSec` and `burst` (its line as long as the cap's);
 * `undefined` when not paced. The bucket names a bad rate or burst itself.
 */
function paceOf(o: DependencyOptions, clock: Clock): TokenBucket | undefined {
  if (o.ratePerSec === undefined) {
    if (o.burst !== undefined) {
      throw new SpillwayConfigError('burst', 'given only with ratePerSec', o.burst);
    }
    return undefined;
  }
  return tokenBucket({
    ratePerSec: o.ratePerSec,
    burst: o.burst ?? 1,
    maxWaiting: o.maxQueue ?? defaults.maxQueue,
    clock,
  });
}

/** Attempts in all and the backoff between them, from the `retry` option. */
function retryOf(retry: DependencyOptions['retry']): { maxAttempts: number; backoff: Backoff } {
  if (retry === false) return { maxAttempts: 1, backoff: makeBackoff() };
  if (retry === undefined) return { maxAttempts: defaults.maxAttempts, backoff: makeBackoff() };
  if (typeof retry !== 'object' || retry === null) {
    throw new SpillwayConfigError('retry', 'retry options or false', retry);
  }
  const m = retry.maxAttempts ?? defaults.maxAttempts;
  if (!Number.isInteger(m) || m < 1 || m > maxAttemptsLimit) {
    throw new SpillwayConfigError(
      'retry.maxAttempts',
      `an integer from 1 to ${maxAttemptsLimit}`,
      m,
    );
  }
  const b = retry.backoff;
  const backoff =
    b === undefined
      ? makeBackoff()
      : typeof (b as Backoff).next === 'function'
        ? (b as Backoff)
        : makeBackoff(b);
  return { maxAttempts: m, backoff };
}

function baseUrlOf(value: DependencyOptions['baseUrl']): BaseUrl | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(value);
    if (url.origin === 'null') throw new TypeError('no origin');
    return new BaseUrl(url);
  } catch {
    throw new SpillwayConfigError('baseUrl', 'an absolute URL', value);
  }
}

function isBreaker(value: unknown): value is CircuitBreaker {
  return typeof (value as { tryAcquire?: unknown } | null)?.tryAcquire === 'function';
}

function isThrottle(value: unknown): value is AdaptiveThrottle {
  return typeof (value as { tryRequest?: unknown } | null)?.tryRequest === 'function';
}

/** Budget options with the dependency's clock filled in (the ratio policy keeps time). */
function withClock(options: unknown, clock: Clock): unknown {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) return options;
  const o = options as { policy?: unknown; clock?: unknown };
  return o.policy === 'ratio' && o.clock === undefined ? { ...o, clock } : options;
}
