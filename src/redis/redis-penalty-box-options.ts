/**
 * The shared penalty box's options, their defaults (in one place), and the check that turns
 * them into settings: the ladder's own (as the memory box checks them), the store it shares,
 * and how often a replica reads the box's changes.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';
import {
  ladderSettings,
  type LadderSettings,
  type PenaltyBoxOptions,
} from '../core/penalty-box/penalty-options.js';
import { redisKey, type KeyKind } from './keys.js';
import type { RedisStore } from './redis-store.js';
import { storeInternals, type StoreInternals } from './store-internals.js';
import { nonEmptyString, optionsObject, positiveNumber } from './validate.js';

/** Options of {@link redisPenaltyBox}: the ladder's, plus where it is shared. */
export interface RedisPenaltyBoxOptions extends PenaltyBoxOptions {
  /**
   * The store whose Redis, deadline, breaker and failure policy the box shares (made by
   * `redisStore`). Required.
   */
  readonly store: RedisStore;
  /** Names the box in Redis (services sharing a Redis keep theirs apart). @default 'penalty' */
  readonly name?: string;
  /**
   * How often this replica reads the box's changes from Redis, in ms: a client escalated,
   * suspended or lifted on another replica is treated so here within about this long.
   * @default 1_000
   */
  readonly syncMs?: number;
  /**
   * How long a suspension is kept in Redis if nobody lifts it, in ms: the bound on what a
   * forgotten suspension costs. @default 30 days
   */
  readonly suspendTtlMs?: number;
}

/** The options checked, with the store's internals and the box's keys. */
export interface BoxSettings extends LadderSettings {
  readonly store: StoreInternals;
  readonly syncMs: number;
  readonly suspendTtlMs: number;
  /** How long a lift's tombstone stays in the feed, in ms. */
  readonly tombMs: number;
  /** How long a state outlives its last step's lifting, in ms. */
  readonly keepMs: number;
  /** The steps' waits for the scripts: comma-separated, -1 for a suspension. */
  readonly waits: string;
  /** The box's keys, in the scripts' order. */
  readonly keys: string[];
}

const day = 86_400_000;

/** `options` checked and defaulted; a `SpillwayConfigError` names the first bad one. */
export function boxSettings(options: RedisPenaltyBoxOptions): BoxSettings {
  const o = optionsObject('redisPenaltyBox options', options);
  const store = storeInternals(o.store);
  if (store === undefined) {
    throw new SpillwayConfigError('store', 'a store made by redisStore', o.store);
  }
  const ladder = ladderSettings('redisPenaltyBox options', { clock: store.clock, ...o });
  const name = nonEmptyString('name', o.name ?? 'penalty');
  const syncMs = positiveNumber('syncMs', o.syncMs ?? 1_000);
  const kinds: KeyKind[] = ['pb:s', 'pb:v', 'pb:f', 'pb:x', 'pb:m'];
  return {
    ...ladder,
    store,
    syncMs,
    suspendTtlMs: positiveNumber('suspendTtlMs', o.suspendTtlMs ?? 30 * day),
    // Long enough that a replica reading every syncMs never misses one; one that does (it
    // was cut off from Redis) reads the whole box again.
    tombMs: Math.max(60_000, 20 * syncMs),
    keepMs: Math.max(ladder.windowMs, ladder.liftAfterMs) + 60_000,
    waits: ladder.steps.map((s) => (s.suspend ? -1 : Math.ceil(s.waitMs))).join(','),
    keys: kinds.map((kind) => redisKey(store.prefix, { name, id: 'box' }, kind)),
  };
}
