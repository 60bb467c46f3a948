/**
 * What a Redis store shares with the Redis concurrency limit built over it: its call gate,
 * prefix, clock, failure policy and health reporting. Kept beside the store, never on it, so
 * none of it is reachable from the package.
 *
 * @module
 */
import type { Clock } from '../core/clock/clock.js';
import type { CallFailure, CallGate } from './call-gate.js';
import type { FailurePolicy } from './failure-policy.js';

/** What the Redis concurrency limit shares with the store (not exported from the package). */
export interface StoreInternals {
  readonly gate: CallGate;
  readonly prefix: string;
  readonly clock: Clock;
  readonly policy: FailurePolicy;
  readonly replicas: number;
  readonly timeoutMs: number;
  /** Reports a call's outcome for degraded/recovered events and stats. */
  note(result: number[] | CallFailure): void;
}

const internals = new WeakMap<object, StoreInternals>();

/** Records `shared` as the internals of `store`, for {@link storeInternals} to find. */
export function shareInternals(store: object, shared: StoreInternals): void {
  internals.set(store, shared);
}

/** The internals of a store made by `redisStore`; undefined for anything else. */
export function storeInternals(store: unknown): StoreInternals | undefined {
  return typeof store === 'object' && store !== null ? internals.get(store) : undefined;
}
