/**
 * Key management for the Redis store's quotas (`peek`, `reset`, `adjust`): one script call
 * each, through the store's gate, so the same deadline, in-flight cap and breaker hold as for
 * decisions. The keys are those `take` uses under the store's `algorithm`. This process's deny
 * cache and lease for the key are dropped on every change; another replica's deny cache may
 * still refuse the key for up to `denyCacheMaxAgeMs`. When Redis cannot be asked these reject
 * with `StoreUnavailableError`, whatever the failure policy: an operator's change that did not
 * happen must not read as one that did.
 *
 * @module
 */
import { SpillwayArgumentError } from '../core/errors/argument-error.js';
import type { RateKeyState } from '../core/rate-store/rate-store.js';
import type { PreparedAsk } from './ask-memo.js';
import { isFailure, type CallFailure, type CallGate } from './call-gate.js';
import {
  fixedWindowAdjustScript,
  forgetKeyScript,
  gcraAdjustScript,
  slidingWindowAdjustScript,
} from './key-scripts.js';
import type { StoreSettings } from './redis-store-options.js';
import { StoreUnavailableError } from './store-unavailable-error.js';

const adjustScripts = {
  gcra: gcraAdjustScript,
  fw: fixedWindowAdjustScript,
  sw: slidingWindowAdjustScript,
} as const;

/** Reads and changes quota keys for one store. */
export class KeyManager {
  readonly #s: StoreSettings;
  readonly #gate: CallGate;
  readonly #note: (result: number[] | CallFailure) => void;

  constructor(s: StoreSettings, gate: CallGate, note: (result: number[] | CallFailure) => void) {
    this.#s = s;
    this.#gate = gate;
    this.#note = note;
  }

  peek(key: string, ask: PreparedAsk): Promise<RateKeyState> {
    return this.adjust(key, 0, ask);
  }

  /** Adds `tokens` (negative: takes them) to `key`'s bucket; 0 only reads it. */
  async adjust(key: string, tokens: number, ask: PreparedAsk): Promise<RateKeyState> {
    const { name, cacheKey } = this.#target(key, ask);
    if (!Number.isSafeInteger(tokens)) {
      throw new SpillwayArgumentError('tokens', 'a whole number', tokens);
    }
    if (tokens !== 0) this.#forgetLocally(cacheKey);
    const script = adjustScripts[ask.kind as keyof typeof adjustScripts];
    const r = await this.#gate.call(script, {
      keys: [name],
      args: [ask.period, ask.limit, tokens],
    });
    const [remaining = 0, retryAfterMs = 0, resetMs = 0] = this.#reply(r);
    // A change made after this process's last decision: whatever it cached is stale again.
    if (tokens !== 0) this.#forgetLocally(cacheKey);
    return { remaining, limit: ask.limit, retryAfterMs, resetMs };
  }

  async reset(key: string, ask: PreparedAsk): Promise<void> {
    const { name, cacheKey } = this.#target(key, ask);
    this.#forgetLocally(cacheKey);
    this.#reply(await this.#gate.call(forgetKeyScript, { keys: [name], args: [] }));
    this.#forgetLocally(cacheKey);
  }

  /** `key`'s Redis key and local cache key under `ask` (as the decisions build them). */
  #target(key: string, ask: PreparedAsk) {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    if (!Number.isSafeInteger(ask.limit) || ask.limit < 1) {
      throw new SpillwayArgumentError('policy limit (burst)', 'a positive integer', ask.limit);
    }
    const name = ask.keyOf(key);
    return { name, cacheKey: name + ask.cacheSuffix };
  }

  #reply(r: number[] | CallFailure): number[] {
    this.#note(r);
    if (isFailure(r)) throw new StoreUnavailableError({ cause: r.error ?? r.failed });
    return r;
  }

  #forgetLocally(cacheKey: string): void {
    this.#s.deny?.forget(cacheKey);
    this.#s.leases?.forget(cacheKey);
  }
}
