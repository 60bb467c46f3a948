/**
 * The default {@link RateStore}: token buckets in an LRU-bounded map per limiter, on the
 * injected clock. Evicting a key forgets its bucket; the key comes back full, which is why
 * `maxKeys` should exceed the number of clients active within one refill time (`burst / rate`).
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { LruMap } from '../internal/lru-map.js';
import { clockLike, optionsObject, positiveInteger } from '../internal/validate.js';
import { tokenEpsilon, waitMs } from '../token-bucket/token-bucket-math.js';
import type { RateDecision, RateKeyState, RatePolicy, RateStore } from './rate-store.js';

/** Options of {@link memoryRateStore}. */
export interface MemoryRateStoreOptions {
  /** Most keys kept per limiter; the least recently used leave first. @default 10_000 */
  readonly maxKeys?: number;
  /** Most limiters (distinct policy names) one store serves. @default 1_000 */
  readonly maxLimiters?: number;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** A {@link RateStore} in process memory. */
export interface MemoryRateStore extends RateStore<RateDecision> {
  peek(key: string, policy: RatePolicy): RateKeyState;
  reset(key: string, policy: RatePolicy): void;
  adjust(key: string, tokens: number, policy: RatePolicy): RateKeyState;
  /** Keys held now for the limiter `name`. */
  size(name: string): number;
  /** Keys evicted so far for the limiter `name`. */
  evictions(name: string): number;
}

interface BucketState {
  tokens: number;
  updatedAt: number;
}

/**
 * What `keyedTokenBuckets(...).take` needs beyond `take` to keep a line per key: pins, so a key
 * with waiters is never evicted, and a take for the oldest waiter served as of when its tokens
 * were due (see `tokenBucket`'s line). Internal: the memory store's, not part of `RateStore`.
 */
export interface WaitingStore {
  readonly maxKeys: number;
  readonly clock: Clock;
  pin(policy: RatePolicy, key: string): boolean;
  /** Unpins `key`, its line empty: what the waiters left above `burst` goes now. */
  unpin(policy: RatePolicy, key: string): void;
  /**
   * 0 when `n` tokens were taken for a waiter, else the ms until they are due. Uncapped: a key
   * with a line never reaches its cap, and {@link WaitingStore.unpin} applies it.
   */
  serveWaiter(key: string, n: number, policy: RatePolicy): number;
}

/** The store as a {@link WaitingStore} when it is this module's memory store. */
export function waitingStore(store: unknown): WaitingStore | undefined {
  return store instanceof MemoryStore ? store : undefined;
}

/** Creates an in-memory store. */
export function memoryRateStore(options?: MemoryRateStoreOptions): MemoryRateStore {
  const o = optionsObject('memoryRateStore options', options);
  const maxKeys = positiveInteger('maxKeys', o.maxKeys ?? 10_000);
  const maxLimiters = positiveInteger('maxLimiters', o.maxLimiters ?? 1_000);
  const clock = clockLike('clock', o.clock ?? systemClock);
  return new MemoryStore(maxKeys, maxLimiters, clock);
}

class MemoryStore implements MemoryRateStore, WaitingStore {
  readonly maxKeys: number;
  readonly #maxLimiters: number;
  readonly clock: Clock;
  readonly #byName = new Map<string, LruMap<BucketState>>();
  // One-entry cache: a limiter calls with the same policy object every time.
  #lastName: string | undefined;
  #lastMap: LruMap<BucketState> | undefined;

  constructor(maxKeys: number, maxLimiters: number, clock: Clock) {
    this.maxKeys = maxKeys;
    this.#maxLimiters = maxLimiters;
    this.clock = clock;
  }

  size(name: string): number {
    return this.#byName.get(name)?.size ?? 0;
  }

  evictions(name: string): number {
    return this.#byName.get(name)?.evictions ?? 0;
  }

  take(key: string, n: number, policy: RatePolicy): RateDecision {
    const map = policy.name === this.#lastName ? this.#lastMap! : this.#mapFor(policy.name);
    const now = this.clock.now();
    const ratePerMs = policy.ratePerSec / 1000;
    const burst = policy.burst;
    let state = map.get(key);
    let tokens: number;
    if (state === undefined) {
      tokens = burst;
      state = { tokens, updatedAt: now };
      map.set(key, state);
    } else {
      const elapsed = now - state.updatedAt;
      tokens = elapsed > 0 ? Math.min(burst, state.tokens + elapsed * ratePerMs) : state.tokens;
      state.updatedAt = now;
    }
    if (tokens + tokenEpsilon >= n) {
      tokens -= n;
      state.tokens = tokens;
      return {
        ok: true,
        remaining: Math.max(0, Math.floor(tokens + tokenEpsilon)),
        limit: burst,
        resetMs: resetMs(burst - tokens, ratePerMs),
      };
    }
    state.tokens = tokens;
    return {
      ok: false,
      remaining: 0,
      retryAfterMs: waitMs(n - tokens, ratePerMs),
      limit: burst,
      resetMs: resetMs(burst - tokens, ratePerMs),
    };
  }

  peek(key: string, policy: RatePolicy): RateKeyState {
    const state = this.#byName.get(policy.name)?.peek(key);
    const tokens = state === undefined ? policy.burst : this.#refilled(state, policy);
    return keyState(tokens, policy);
  }

  reset(key: string, policy: RatePolicy): void {
    // Filled rather than deleted: a key with waiters keeps its pin.
    const state = this.#byName.get(policy.name)?.peek(key);
    if (state === undefined) return;
    state.tokens = policy.burst;
    state.updatedAt = this.clock.now();
  }

  adjust(key: string, tokens: number, policy: RatePolicy): RateKeyState {
    const map = policy.name === this.#lastName ? this.#lastMap! : this.#mapFor(policy.name);
    let state = map.get(key);
    if (state === undefined) {
      state = { tokens: policy.burst, updatedAt: this.clock.now() };
      map.set(key, state);
    }
    const held = this.#refilled(state, policy);
    state.tokens = Math.min(policy.burst, held + tokens);
    state.updatedAt = this.clock.now();
    return keyState(state.tokens, policy);
  }

  /** What `state` holds now, refilled (never above `burst`), without writing it. */
  #refilled(state: BucketState, policy: RatePolicy): number {
    const elapsed = this.clock.now() - state.updatedAt;
    const tokens = elapsed > 0 ? state.tokens + (elapsed * policy.ratePerSec) / 1000 : state.tokens;
    return Math.min(policy.burst, tokens);
  }

  pin(policy: RatePolicy, key: string): boolean {
    return this.#byName.get(policy.name)?.pin(key) ?? false;
  }

  unpin(policy: RatePolicy, key: string): void {
    const map = this.#byName.get(policy.name);
    const state = map?.peek(key);
    if (state !== undefined && state.tokens > policy.burst) state.tokens = policy.burst;
    map?.unpin(key);
  }

  serveWaiter(key: string, n: number, policy: RatePolicy): number {
    const map = policy.name === this.#lastName ? this.#lastMap! : this.#mapFor(policy.name);
    const state = map.get(key);
    if (state === undefined) {
      const d = this.take(key, n, policy); // evicted only if every key was pinned
      return d.ok ? 0 : d.retryAfterMs;
    }
    const now = this.clock.now();
    const ratePerMs = policy.ratePerSec / 1000;
    const elapsed = now - state.updatedAt;
    // Uncapped until the grant: the waiter is served as of when its tokens were due.
    const tokens = elapsed > 0 ? state.tokens + elapsed * ratePerMs : state.tokens;
    state.updatedAt = now;
    if (tokens + tokenEpsilon >= n) {
      state.tokens = tokens - n;
      return 0;
    }
    state.tokens = tokens;
    return waitMs(n - tokens, ratePerMs);
  }

  #mapFor(name: string): LruMap<BucketState> {
    let map = this.#byName.get(name);
    if (map === undefined) {
      if (this.#byName.size >= this.#maxLimiters) {
        throw new SpillwayArgumentError(
          'policy.name',
          `one of at most ${this.#maxLimiters} limiters on this store (raise maxLimiters)`,
          name,
        );
      }
      map = new LruMap(this.maxKeys);
      this.#byName.set(name, map);
    }
    this.#lastName = name;
    this.#lastMap = map;
    return map;
  }
}

function resetMs(missing: number, ratePerMs: number): number {
  return missing <= tokenEpsilon ? 0 : Math.ceil(missing / ratePerMs);
}

/** What key management reports for a bucket holding `tokens` (below 0 after a penalty). */
export function keyState(tokens: number, policy: RatePolicy): RateKeyState {
  const ratePerMs = policy.ratePerSec / 1000;
  return {
    remaining: Math.max(0, Math.floor(tokens + tokenEpsilon)),
    limit: policy.burst,
    retryAfterMs: tokens + tokenEpsilon >= 1 ? 0 : waitMs(1 - tokens, ratePerMs),
    resetMs: resetMs(policy.burst - tokens, ratePerMs),
  };
}
