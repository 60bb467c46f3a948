/**
 * One token bucket per client key, behind the {@link RateStore} interface. By default the
 * buckets live in memory in an LRU-bounded map; pass a `store` (e.g. `spillway/redis`) to share
 * them across replicas without changing a caller.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import {
  clockLike,
  nonEmptyString,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';
import { memoryRateStore } from '../rate-store/memory-rate-store.js';
import type { RateDecision, RatePolicy, RateStore } from '../rate-store/rate-store.js';
import { checkTake } from '../token-bucket/token-bucket-math.js';

/** Options of {@link keyedTokenBuckets}. */
export interface KeyedTokenBucketsOptions<S extends RateStore = RateStore<RateDecision>> {
  /** Tokens added per second to each key's bucket. Required. */
  readonly ratePerSec: number;
  /** Capacity of each key's bucket. Required. */
  readonly burst: number;
  /** Most keys kept in memory (default store only). @default 10_000 */
  readonly maxKeys?: number;
  /** Names this limiter inside a shared store. @default 'default' */
  readonly name?: string;
  /** Where the buckets live. @default memoryRateStore({ maxKeys, clock }) */
  readonly store?: S;
  /** Where time comes from (default store only). @default systemClock */
  readonly clock?: Clock;
}

/** Emitted for every refusal (only built when somebody listens). */
export interface KeyedThrottleEvent {
  readonly key: string;
  readonly n: number;
  readonly retryAfterMs: number;
}

/** Per-key token buckets. `R` is `RateDecision` for in-memory stores, a promise for remote ones. */
export interface KeyedTokenBuckets<R = RateDecision> {
  /** Takes `n` tokens (default 1) from `key`'s bucket; a refusal consumes nothing. */
  tryTake(key: string, n?: number): R;
  /** The policy this limiter enforces (what `RateLimit-Policy` headers describe). */
  readonly policy: RatePolicy;
  /** Fires on each refusal. */
  readonly onThrottle: Event<KeyedThrottleEvent>;
}

type DecisionOf<S> = S extends RateStore<infer R> ? R : never;

/**
 * Creates per-key token buckets.
 *
 * @example
 * const perClient = keyedTokenBuckets({ ratePerSec: 150, burst: 15 });
 * const d = perClient.tryTake(clientId);
 * if (!d.ok) reply429(d.retryAfterMs);
 */
export function keyedTokenBuckets(
  options: KeyedTokenBucketsOptions,
): KeyedTokenBuckets<RateDecision>;
export function keyedTokenBuckets<S extends RateStore>(
  options: KeyedTokenBucketsOptions<S> & { readonly store: S },
): KeyedTokenBuckets<DecisionOf<S>>;
export function keyedTokenBuckets(
  options: KeyedTokenBucketsOptions<RateStore>,
): KeyedTokenBuckets<RateDecision | PromiseLike<RateDecision>> {
  const o = optionsObject('keyedTokenBuckets options', options);
  const policy: RatePolicy = Object.freeze({
    name: nonEmptyString('name', o.name ?? 'default'),
    ratePerSec: positiveNumber('ratePerSec', o.ratePerSec),
    burst: positiveInteger('burst', o.burst),
  });
  let store = o.store;
  if (store === undefined) {
    const maxKeys = positiveInteger('maxKeys', o.maxKeys ?? 10_000);
    const clock = clockLike('clock', o.clock ?? systemClock);
    store = memoryRateStore({ maxKeys, clock });
  } else if (typeof (store as { take?: unknown }).take !== 'function') {
    throw new SpillwayArgumentError(
      'store',
      'a RateStore (an object with take(key, n, policy))',
      store,
    );
  }
  return new Keyed(store, policy);
}

class Keyed implements KeyedTokenBuckets<RateDecision | PromiseLike<RateDecision>> {
  readonly policy: RatePolicy;
  readonly #store: RateStore;
  readonly #throttle = new Emitter<KeyedThrottleEvent>();
  readonly onThrottle = this.#throttle.event;

  constructor(store: RateStore, policy: RatePolicy) {
    this.#store = store;
    this.policy = policy;
  }

  tryTake(key: string, n = 1): RateDecision | PromiseLike<RateDecision> {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    if (n !== 1) checkTake(n, this.policy.burst);
    const decision = this.#store.take(key, n, this.policy);
    if (this.#throttle.size === 0) return decision;
    if ('then' in decision) {
      return decision.then((d) => {
        this.#report(key, n, d);
        return d;
      });
    }
    this.#report(key, n, decision);
    return decision;
  }

  #report(key: string, n: number, d: RateDecision): void {
    if (!d.ok) this.#throttle.emit({ key, n, retryAfterMs: d.retryAfterMs });
  }
}
