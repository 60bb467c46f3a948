/**
 * One rate decision, whichever the algorithm: the deny cache, then a local lease, then the
 * script on Redis, whose reply becomes the decision (and feeds the caches) or whose failure
 * becomes the failure policy's answer. Counts what answered, for the store's stats.
 *
 * @module
 */
import { SpillwayArgumentError } from '../core/errors/argument-error.js';
import type { RateDecision } from '../core/rate-store/rate-store.js';
import { isFailure, type CallFailure, type CallGate } from './call-gate.js';
import type { PreparedAsk } from './ask-memo.js';
import type { StoreSettings } from './redis-store-options.js';

/** How often each part of the path answered, since creation. */
export interface DecisionCounts {
  readonly calls: number;
  readonly denyCacheHits: number;
  readonly leaseHits: number;
  readonly degraded: number;
}

/** Decides rate asks for one store, over the store's gate. */
export class RateDecider {
  readonly #s: StoreSettings;
  readonly #gate: CallGate;
  readonly #note: (result: number[] | CallFailure) => void;
  #calls = 0;
  #denyHits = 0;
  #leaseHits = 0;
  #degradedCount = 0;

  /** `note` hears every call's outcome (the store's degraded/recovered reporting). */
  constructor(s: StoreSettings, gate: CallGate, note: (result: number[] | CallFailure) => void) {
    this.#s = s;
    this.#gate = gate;
    this.#note = note;
  }

  counts(): DecisionCounts {
    return {
      calls: this.#calls,
      denyCacheHits: this.#denyHits,
      leaseHits: this.#leaseHits,
      degraded: this.#degradedCount,
    };
  }

  /** `ask` for `n` on `key`. Throws on bad arguments; otherwise never rejects. */
  decide(key: string, n: number, ask: PreparedAsk): Promise<RateDecision> {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    const limit = ask.limit;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new SpillwayArgumentError('policy limit (burst)', 'a positive integer', limit);
    }
    if (!Number.isSafeInteger(n) || n < 1 || n > limit) {
      throw new SpillwayArgumentError('n', `an integer from 1 to ${limit}`, n);
    }
    const s = this.#s;
    const redisKeyName = ask.keyOf(key);
    const cacheKey = redisKeyName + ask.cacheSuffix;
    const now = s.clock.now();
    if (s.deny !== undefined) {
      const wait = s.deny.check(cacheKey, n, now);
      if (wait !== undefined) {
        this.#denyHits++;
        return Promise.resolve({
          ok: false,
          remaining: 0,
          retryAfterMs: wait,
          limit,
          resetMs: wait,
        });
      }
    }
    let want = n;
    const leases = s.leases;
    if (leases !== undefined) {
      const left = leases.spend(cacheKey, n, now);
      if (left >= 0) {
        this.#leaseHits++;
        return Promise.resolve({ ok: true, remaining: left, limit, resetMs: 0 });
      }
      want = leases.want(cacheKey, n, now);
    }
    this.#calls++;
    return this.#gate.callThen(
      ask.script,
      { keys: [redisKeyName], args: [ask.periodArg, limit, n, want] },
      (r) => {
        this.#note(r);
        if (!isFailure(r)) return this.#answer(cacheKey, n, { ask, r, sentAt: now });
        this.#degradedCount++;
        return s.fallback.decide(key, n, {
          l: { kind: ask.kind, name: ask.name, limit, ratePerSec: ask.ratePerSec },
          retryAfterMs: this.#gate.breakerWaitMs() || s.breakerCooldownMs,
        });
      },
    );
  }

  #answer(
    cacheKey: string,
    n: number,
    at: { readonly ask: PreparedAsk; readonly r: number[]; readonly sentAt: number },
  ): RateDecision {
    const [granted = 0, remaining = 0, retry = -1, reset = 0] = at.r;
    const limit = at.ask.limit;
    const s = this.#s;
    if (granted >= n) {
      if (s.leases !== undefined) {
        const holdMs =
          at.ask.kind === 'fw' ? Math.min(s.leases.maxHoldMs, reset) : s.leases.maxHoldMs;
        s.leases.grant(
          cacheKey,
          { granted, n, remote: remaining },
          {
            now: at.sentAt,
            expiresAt: at.sentAt + holdMs,
          },
        );
      }
      return { ok: true, remaining: remaining + granted - n, limit, resetMs: reset };
    }
    const retryAfterMs = retry < 1 ? 1 : retry;
    s.deny?.remember(cacheKey, n, { sentAt: at.sentAt, retryAfterMs });
    s.leases?.asked(cacheKey, at.sentAt);
    return { ok: false, remaining: 0, retryAfterMs, limit, resetMs: reset };
  }
}
