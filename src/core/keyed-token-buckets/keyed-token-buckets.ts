/**
 * One token bucket per client key, behind the {@link RateStore} interface. By default the
 * buckets live in memory in an LRU-bounded map; pass a `store` (e.g. `spillway/redis`) to share
 * them across replicas without changing a caller. `take` waits for a key's tokens in a line per
 * key (the same line as `tokenBucket`'s); a key with waiters is pinned in the memory store, so
 * the LRU bound never evicts it.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { RateLimitedError } from '../errors/rate-limited-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import {
  clockLike,
  nonEmptyString,
  nonNegativeInteger,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';
import {
  memoryRateStore,
  waitingStore,
  type WaitingStore,
} from '../rate-store/memory-rate-store.js';
import type {
  RateDecision,
  RateKeyState,
  RatePolicy,
  RateStore,
  StoreAnswer,
} from '../rate-store/rate-store.js';
import { PacingLine, type WaitTally } from '../token-bucket/pacing-line.js';
import {
  readTake,
  takeWaiting,
  type PaceHost,
  type ReadTake,
  type TakeOptions,
} from '../token-bucket/take-waiting.js';
import { checkTake } from '../token-bucket/token-bucket-math.js';
import { adjustTokens, managed, managedKey } from './key-management.js';

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
  /**
   * Most callers waiting in `take` across all keys; one more is refused. With the memory store
   * at most `maxKeys − 1` keys have waiters at once (see {@link KeyedTokenBuckets.take}).
   * @default 1_000
   */
  readonly maxWaiting?: number;
  /**
   * Where time comes from: the default store's clock, and the waiting lines' clock when the
   * store is not a memory store (a memory store's own clock is used otherwise).
   * @default systemClock
   */
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
  /**
   * Takes `n` tokens (default 1) from `key`'s bucket; a refusal consumes nothing. While callers
   * wait on `key` in `take`, it refuses (no barging) with the wait for their turn.
   */
  tryTake(key: string, n?: number): R;
  /**
   * Waits for `key`'s tokens, in arrival order per key, with the same answers as
   * `tokenBucket(...).take` (refused at once, never after waiting). A key with waiters is never
   * evicted from the memory store: it is pinned until its line empties. So that keys without
   * waiters always have room, at most `maxKeys − 1` keys may have waiters; a take that would
   * open a line for one more key is refused with `WaitLineFullError`, while `tryTake` on new
   * keys goes on working. Over a store that answers with promises (Redis), a take does not
   * wait: it resolves when the store admits it and rejects with `RateLimitedError` otherwise.
   */
  take(key: string, options?: TakeOptions): Promise<void>;
  /** `key`'s bucket now, changing nothing (a key never seen is full). */
  get(key: string): StoreAnswer<R, RateKeyState>;
  /** Forgets what `key` has taken (express-rate-limit's `resetKey`): its bucket is full again. */
  reset(key: string): StoreAnswer<R, void>;
  /**
   * Takes `tokens` (a whole number ≥ 1) from `key`'s bucket whatever it holds — a failed login,
   * say. The bucket may go below 0: a debt that refills at `ratePerSec`, every take refused
   * until it is paid. Returns the bucket after.
   */
  penalize(key: string, tokens: number): StoreAnswer<R, RateKeyState>;
  /** Gives `tokens` back to `key`'s bucket, never above `burst`. Returns the bucket after. */
  reward(key: string, tokens: number): StoreAnswer<R, RateKeyState>;
  /** Callers waiting in `take`, across all keys. */
  readonly waiting: number;
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
  const maxWaiting = nonNegativeInteger('maxWaiting', o.maxWaiting ?? 1_000);
  const clock = clockLike('clock', o.clock ?? systemClock);
  let store = o.store;
  if (store === undefined) {
    const maxKeys = positiveInteger('maxKeys', o.maxKeys ?? 10_000);
    store = memoryRateStore({ maxKeys, clock });
  } else if (typeof (store as { take?: unknown }).take !== 'function') {
    throw new SpillwayArgumentError(
      'store',
      'a RateStore (an object with take(key, n, policy))',
      store,
    );
  }
  return new Keyed(store, policy, { maxWaiting, clock });
}

const oneToken: ReadTake = Object.freeze({
  n: 1,
  signal: undefined,
  maxWaitMs: Infinity,
  expiresAt: Infinity,
});

class Keyed implements KeyedTokenBuckets<RateDecision | PromiseLike<RateDecision>>, PaceHost {
  readonly policy: RatePolicy;
  readonly clock: Clock;
  readonly maxWaiting: number;
  readonly tally: WaitTally = { waiting: 0 };
  readonly #store: RateStore;
  readonly #waitingStore: WaitingStore | undefined;
  readonly #ratePerMs: number;
  // One line per key with waiters: at most `maxWaiting` of them (a line is dropped once empty).
  readonly #lines = new Map<string, PacingLine>();
  readonly #throttle = new Emitter<KeyedThrottleEvent>();
  readonly onThrottle = this.#throttle.event;

  constructor(
    store: RateStore,
    policy: RatePolicy,
    waiting: { readonly maxWaiting: number; readonly clock: Clock },
  ) {
    this.#store = store;
    this.policy = policy;
    this.#waitingStore = waitingStore(store);
    this.clock = this.#waitingStore?.clock ?? waiting.clock;
    this.maxWaiting = waiting.maxWaiting;
    this.#ratePerMs = policy.ratePerSec / 1000;
  }

  get waiting(): number {
    return this.tally.waiting;
  }

  tryTake(key: string, n = 1): RateDecision | PromiseLike<RateDecision> {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    if (n !== 1) checkTake(n, this.policy.burst);
    if (this.#lines.size > 0) {
      const line = this.#lines.get(key);
      if (line !== undefined) return this.#behind(line, key, n);
    }
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

  take(key: string, options?: TakeOptions): Promise<void> {
    if (typeof key !== 'string') {
      return Promise.reject(new SpillwayArgumentError('key', 'a string', key));
    }
    const t = options === undefined ? oneToken : readTake(options, this.policy.burst);
    return takeWaiting(this, key, t);
  }

  get(key: string): RateKeyState | Promise<RateKeyState> {
    return managed(this.#store).peek(managedKey(key), this.policy);
  }

  reset(key: string): void | Promise<void> {
    return managed(this.#store).reset(managedKey(key), this.policy);
  }

  penalize(key: string, tokens: number): RateKeyState | Promise<RateKeyState> {
    return managed(this.#store).adjust(managedKey(key), -adjustTokens(tokens), this.policy);
  }

  reward(key: string, tokens: number): RateKeyState | Promise<RateKeyState> {
    return managed(this.#store).adjust(managedKey(key), adjustTokens(tokens), this.policy);
  }

  lineFor(key: string): PacingLine | undefined {
    return this.#lines.size === 0 ? undefined : this.#lines.get(key);
  }

  takeOrWait(key: string, n: number): number | Promise<void> {
    const d = this.#store.take(key, n, this.policy);
    if ('then' in d) {
      // A remote store: one attempt, no line (other replicas take from the same bucket unseen).
      return Promise.resolve(d).then((answer) => {
        if (answer.ok) return;
        this.refused(key, n, answer.retryAfterMs);
        throw new RateLimitedError(answer.retryAfterMs);
      });
    }
    return d.ok ? 0 : d.retryAfterMs;
  }

  openLine(key: string): PacingLine | undefined {
    const ws = this.#waitingStore;
    if (ws !== undefined) {
      // One key's room stays free for callers that do not wait.
      if (this.#lines.size >= ws.maxKeys - 1) return undefined;
      ws.pin(this.policy, key);
    }
    const policy = this.policy;
    const store = this.#store;
    const line = new PacingLine({
      clock: this.clock,
      ratePerMs: this.#ratePerMs,
      tally: this.tally,
      take:
        ws === undefined
          ? (n) => {
              const d = store.take(key, n, policy) as RateDecision;
              return d.ok ? 0 : d.retryAfterMs;
            }
          : (n) => ws.serveWaiter(key, n, policy),
      emptied: () => {
        this.#lines.delete(key);
        ws?.unpin(policy, key);
      },
    });
    this.#lines.set(key, line);
    return line;
  }

  refused(key: string, n: number, retryAfterMs: number): void {
    if (this.#throttle.size > 0) this.#throttle.emit({ key, n, retryAfterMs });
  }

  /** A refusal for a key whose line stands: the wait is the line's, and nothing is taken. */
  #behind(line: PacingLine, key: string, n: number): RateDecision {
    const now = this.clock.now();
    const retryAfterMs = line.waitBehind(n, now);
    const fullAgainMs = Math.ceil(this.policy.burst / this.#ratePerMs);
    this.refused(key, n, retryAfterMs);
    return {
      ok: false,
      remaining: 0,
      retryAfterMs,
      limit: this.policy.burst,
      resetMs: line.waitBehind(0, now) + fullAgainMs,
    };
  }

  #report(key: string, n: number, d: RateDecision): void {
    if (!d.ok) this.#throttle.emit({ key, n, retryAfterMs: d.retryAfterMs });
  }
}
