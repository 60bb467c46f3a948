/**
 * Key management for keyed quotas — read a key's bucket, forget it, take tokens from it as a
 * penalty, give them back as a reward — checked here and run by the store, so the memory
 * store and the Redis store answer alike (rate-limiter-flexible's `get`, `delete`, `penalty`
 * and `reward`; express-rate-limit's `resetKey`).
 *
 * @module
 */
import { SpillwayArgumentError } from '../errors/argument-error.js';
import type { RateStore } from '../rate-store/rate-store.js';

/** The key-management half of a store, when it has one. */
export type ManagedStore = Required<Pick<RateStore, 'peek' | 'reset' | 'adjust'>>;

/** Most tokens one penalty or reward moves (a larger debt would outlast any sane refill). */
export const maxAdjustTokens = 1e9;

/** `store` as a {@link ManagedStore}, or an argument error saying it cannot manage keys. */
export function managed(store: RateStore): ManagedStore {
  const s = store as Partial<ManagedStore>;
  if (
    typeof s.peek !== 'function' ||
    typeof s.reset !== 'function' ||
    typeof s.adjust !== 'function'
  ) {
    throw new SpillwayArgumentError(
      'store',
      'a store with peek, reset and adjust (key management); this one only takes',
      store,
    );
  }
  return s as ManagedStore;
}

/** `key`, checked. */
export function managedKey(key: unknown): string {
  if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
  return key;
}

/** `tokens` for a penalty or a reward: a whole number from 1 to {@link maxAdjustTokens}. */
export function adjustTokens(tokens: unknown): number {
  if (
    typeof tokens !== 'number' ||
    !Number.isSafeInteger(tokens) ||
    tokens < 1 ||
    tokens > maxAdjustTokens
  ) {
    throw new SpillwayArgumentError(
      'tokens',
      `a whole number from 1 to ${maxAdjustTokens}`,
      tokens,
    );
  }
  return tokens;
}
