/**
 * The narrow interface behind every keyed quota. The memory store lives in core; a Redis store
 * (`spillway/redis`) implements the same contract, so limiters and the HTTP guard never change
 * when state moves out of the process. `spillway/testing` has the conformance suite both pass.
 *
 * @module
 */

/** What a store enforces for one limiter: a token bucket per key. Create once, reuse per call. */
export interface RatePolicy {
  /** Names the limiter, so one store can hold several; part of every key. */
  readonly name: string;
  /** Tokens added per second per key. */
  readonly ratePerSec: number;
  /** Bucket capacity per key. */
  readonly burst: number;
}

/** Fields every decision carries (for `RateLimit` headers and logs). */
interface DecisionBase {
  /** The bucket's capacity. */
  readonly limit: number;
  /** Milliseconds until the key's bucket is full again. */
  readonly resetMs: number;
  /** True when the store could not be asked and a failure policy answered instead. */
  readonly degraded?: boolean;
}

/** The answer of a store: admitted with what is left, or refused with the exact wait. */
export type RateDecision =
  | (DecisionBase & { readonly ok: true; readonly remaining: number })
  | (DecisionBase & {
      readonly ok: false;
      readonly remaining: 0;
      readonly retryAfterMs: number;
      /**
       * Set when the refusal says nothing about the client's quota: the store could not be
       * asked and its failure policy is `closed`. Answer 503 "retry elsewhere" (no
       * `Retry-After`), not 429.
       */
      readonly reason?: RateRefusalReason;
    });

/** Why a refusal is not the client's quota (see {@link RateDecision}). */
export type RateRefusalReason = 'store-unavailable';

/** One key's bucket under one policy, as key management reads it (see {@link RateStore.peek}). */
export interface RateKeyState {
  /** Whole tokens a take could use now (0 while a penalty keeps the bucket in debt). */
  readonly remaining: number;
  /** The bucket's capacity. */
  readonly limit: number;
  /** Ms until one token is available; 0 when one is now. */
  readonly retryAfterMs: number;
  /** Ms until the bucket is full again; 0 when it is. */
  readonly resetMs: number;
}

/** `T`, or a promise of it for a store whose decisions `R` are promises. */
export type StoreAnswer<R, T> = R extends PromiseLike<unknown> ? Promise<T> : T;

/**
 * Where keyed token buckets live. `take` consumes `n` tokens from `key`'s bucket under
 * `policy`, atomically; a refusal consumes nothing. Sync stores return the decision, remote
 * stores a promise of it. The key-management methods are optional (a store without them
 * still limits; `keyedTokenBuckets(...).reset` and the like then throw).
 */
export interface RateStore<
  R extends RateDecision | PromiseLike<RateDecision> = RateDecision | PromiseLike<RateDecision>,
> {
  take(key: string, n: number, policy: RatePolicy): R;
  /** `key`'s bucket now, changing nothing; a key the store does not hold is full. */
  peek?(key: string, policy: RatePolicy): StoreAnswer<R, RateKeyState>;
  /** Forgets what `key` has taken: its bucket is full again. */
  reset?(key: string, policy: RatePolicy): StoreAnswer<R, void>;
  /**
   * Adds `tokens` to `key`'s bucket, or takes them away when negative, whatever the bucket
   * holds: never above `burst`, but it may go below 0, a debt that refills at the policy's
   * rate (every take is refused until it is paid).
   */
  adjust?(key: string, tokens: number, policy: RatePolicy): StoreAnswer<R, RateKeyState>;
}
