/**
 * Key management on a route's quota, as `guard.quota(route)` hands it out: read a client's
 * buckets, forget them, take tokens as a penalty, give them back as a reward — on every policy
 * of the route at once, in memory or in a store (rate-limiter-flexible's `get`, `delete`,
 * `penalty`, `reward`; express-rate-limit's `resetKey`). A penalty may leave a bucket below
 * zero, a debt that refills at the policy's rate; a reward never fills one past its size.
 *
 * A route whose numbers come from functions of the request knows a client's numbers only once
 * it has served it: `get`, `penalize` and `reward` on a key it has not seen throw, and `reset`
 * has nothing to do.
 *
 * @module
 */
import { SpillwayArgumentError, type RateKeyState, type RatePolicy } from '../index.js';
import { adjustTokens } from '../core/keyed-token-buckets/key-management.js';
import { keyState } from '../core/rate-store/memory-rate-store.js';
import { refill } from './quota-buckets.js';
import type { QuotaKeyEntry, RouteQuota } from './route-quota.js';

/** One policy's bucket for a client. */
export interface QuotaKeyState extends RateKeyState {
  /** The policy's name (as in `RateLimit-Policy`). */
  readonly policy: string;
}

/** A route's quota, by client key. Every method works on every policy of the route. */
export interface QuotaKeys {
  /** Each policy's bucket for `key`, in order, changing nothing (unseen: full). */
  get(key: string): Promise<readonly QuotaKeyState[]>;
  /** Forgets what `key` has taken: full again under every policy. */
  reset(key: string): Promise<void>;
  /** Takes `tokens` (a whole number ≥ 1) from each of `key`'s buckets, whatever they hold. */
  penalize(key: string, tokens: number): Promise<readonly QuotaKeyState[]>;
  /** Gives `tokens` back to each of `key`'s buckets, never past its size. */
  reward(key: string, tokens: number): Promise<readonly QuotaKeyState[]>;
}

/** Key management over a route's quota. */
export function quotaKeys(quota: RouteQuota): QuotaKeys {
  const entry = (key: unknown): QuotaKeyEntry => quota.keyEntry(checkedKey(key));
  return {
    get: async (key) => adjustAll(entry(key), key, 0),
    reset: async (key) => {
      const e = entry(key);
      e.forget();
      const limits = e.limits;
      if (limits === undefined) return;
      await Promise.all(
        e.stores.map((store, i): Promise<void> => {
          if (store === undefined) return Promise.resolve();
          if (store.reset === undefined) return noManagement(store);
          return Promise.resolve(store.reset(key, limits.policies[i]!));
        }),
      );
    },
    penalize: async (key, tokens) => adjustAll(entry(key), key, -adjustTokens(tokens)),
    reward: async (key, tokens) => adjustAll(entry(key), key, adjustTokens(tokens)),
  };
}

/** Adds `tokens` to every bucket of `key` (0 reads them). */
async function adjustAll(
  entry: QuotaKeyEntry,
  key: string,
  tokens: number,
): Promise<readonly QuotaKeyState[]> {
  const limits = entry.limits;
  if (limits === undefined) {
    throw new SpillwayArgumentError(
      'key',
      "a client this route has served (its quota's numbers come from a function of the request)",
      key,
    );
  }
  const state = entry.state(tokens !== 0);
  if (state !== undefined) refill(state, entry.clock.now(), entry.stores);
  const answers = entry.stores.map((store, i): Promise<RateKeyState> => {
    const policy = limits.policies[i]!;
    if (store === undefined) {
      if (state === undefined) return Promise.resolve(keyState(policy.burst, policy));
      if (tokens !== 0) state.tokens[i] = Math.min(policy.burst, state.tokens[i]! + tokens);
      return Promise.resolve(keyState(state.tokens[i]!, policy));
    }
    return Promise.resolve(
      tokens === 0 ? peekOf(store, key, policy) : adjustOf(store, key, { tokens, policy }),
    );
  });
  const states = await Promise.all(answers);
  return states.map((s, i) => ({ policy: entry.names[i]!, ...s }));
}

type Store = NonNullable<QuotaKeyEntry['stores'][number]>;

function peekOf(store: Store, key: string, policy: RatePolicy) {
  if (store.peek === undefined) return noManagement(store);
  return store.peek(key, policy);
}

function adjustOf(
  store: Store,
  key: string,
  at: { readonly tokens: number; readonly policy: RatePolicy },
) {
  if (store.adjust === undefined) return noManagement(store);
  return store.adjust(key, at.tokens, at.policy);
}

function noManagement(store: unknown): never {
  throw new SpillwayArgumentError(
    'store',
    'a store with peek, reset and adjust (key management); this one only takes',
    store,
  );
}

function checkedKey(key: unknown): string {
  if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
  return key;
}
