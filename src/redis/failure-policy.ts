/**
 * What a rate decision is when Redis could not be asked (error, timeout, breaker open, not
 * connected, too many calls in flight). Every answer here is immediate and carries
 * `degraded: true`:
 * - `open` admits (quotas stop being enforced while Redis is away);
 * - `closed` refuses with `reason: 'store-unavailable'` (HTTP: 503 "retry elsewhere", not 429);
 * - `local` enforces each limit ÷ `replicas` in this process, with core's memory store.
 *
 * @module
 */
import type { Clock } from '../core/clock/clock.js';
import { memoryRateStore, type MemoryRateStore } from '../core/rate-store/memory-rate-store.js';
import type { RateDecision, RatePolicy } from '../core/rate-store/rate-store.js';

/** How the store answers when Redis cannot: `open` admits, `closed` refuses, `local` shares. */
export type FailurePolicy = 'open' | 'closed' | 'local';

/** The limit a fallback decision enforces: `limit` per `windowMs` (a bucket: burst, refill). */
export interface FallbackLimit {
  readonly kind: string;
  readonly name: string;
  readonly limit: number;
  readonly ratePerSec: number;
}

const maxLimiters = 1_000;

/** Answers rate decisions by policy. */
export class RateFallback {
  readonly policy: FailurePolicy;
  readonly #replicas: number;
  readonly #clock: Clock;
  readonly #maxKeys: number;
  #local: MemoryRateStore | undefined;
  // Scaled policies, one per distinct limiter (bounded like the memory store's limiters).
  readonly #scaled = new Map<string, RatePolicy>();

  constructor(settings: {
    readonly policy: FailurePolicy;
    readonly replicas: number;
    readonly clock: Clock;
    readonly maxKeys: number;
  }) {
    this.policy = settings.policy;
    this.#replicas = settings.replicas;
    this.#clock = settings.clock;
    this.#maxKeys = settings.maxKeys;
    if (settings.policy === 'local') this.#local = this.#memory();
  }

  /** The fallback answer for `n` on `key`; `retryAfterMs` is used by `closed` only. */
  decide(
    key: string,
    n: number,
    at: { readonly l: FallbackLimit; readonly retryAfterMs: number },
  ): RateDecision {
    const l = at.l;
    if (this.policy === 'open') {
      return { ok: true, remaining: 0, limit: l.limit, resetMs: 0, degraded: true };
    }
    if (this.policy === 'closed') {
      return {
        ok: false,
        remaining: 0,
        retryAfterMs: Math.max(1, Math.ceil(at.retryAfterMs)),
        limit: l.limit,
        resetMs: 0,
        degraded: true,
        reason: 'store-unavailable',
      };
    }
    const d = this.#local!.take(key, n, this.#share(l));
    // Reported against the shared limit, as a healthy decision would be.
    return { ...d, limit: l.limit, degraded: true };
  }

  #memory(): MemoryRateStore {
    return memoryRateStore({ clock: this.#clock, maxKeys: this.#maxKeys, maxLimiters });
  }

  /** This replica's share: ⌊limit ÷ replicas⌋ (at least 1), refilled at rate ÷ replicas. */
  #share(l: FallbackLimit): RatePolicy {
    const id = `${l.kind}\u0000${l.name}\u0000${l.limit}\u0000${l.ratePerSec}`;
    let p = this.#scaled.get(id);
    if (p === undefined) {
      if (this.#scaled.size >= maxLimiters) {
        // Limits that keep changing: start over rather than grow (local state is a fallback).
        this.#scaled.clear();
        this.#local = this.#memory();
      }
      p = Object.freeze({
        name: id,
        burst: Math.max(1, Math.floor(l.limit / this.#replicas)),
        ratePerSec: l.ratePerSec / this.#replicas,
      });
      this.#scaled.set(id, p);
    }
    return p;
  }
}
