/**
 * A concurrency limit shared by every replica: at most `limit` weight held at once across all
 * of them, kept as expiring leases in Redis (a crashed replica's leases come back after
 * `leaseTtlMs`; held leases are renewed). Only the waiting is local: a refused caller may wait
 * in this process's bounded line, polling Redis, for at most `maxQueueWaitMs`. Same shapes as
 * core's `concurrencyLimit`: refusals are values, permits are disposable and release once.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock/clock.js';
import {
  concurrencyLimit,
  type ConcurrencyLimit,
} from '../core/concurrency-limit/concurrency-limit.js';
import type { Permit } from '../core/concurrency-limit/permit.js';
import { SpillwayArgumentError } from '../core/errors/argument-error.js';
import { rejectionError, type RejectionReason } from '../core/errors/rejected-error.js';
import { Emitter, type Event } from '../core/events/emitter.js';
import { isFailure } from './call-gate.js';
import { redisKey } from './keys.js';
import { RedisLeasePermit, type LeaseOwner, type LeasePermit } from './lease-permit.js';
import {
  limitSettings,
  type LimitSettings,
  type RedisConcurrencyLimitOptions,
} from './redis-concurrency-limit-options.js';
import {
  leaseMember,
  semAcquireScript,
  semReleaseScript,
  semRenewScript,
} from './semaphore-scripts.js';
import type { StoreInternals } from './store-internals.js';
import { StoreUnavailableError } from './store-unavailable-error.js';

/** Options of {@link RedisConcurrencyLimit.acquire}. */
export interface RedisAcquireOptions {
  /** Aborting leaves the line at once (`aborted`). */
  readonly signal?: AbortSignal | undefined;
  /** An absolute time on the store's clock, or anything with `expiresAt` (a `Deadline`). */
  readonly deadline?: number | { readonly expiresAt: number } | undefined;
  /** Which semaphore of this limit (e.g. a tenant); each key has its own `limit`. @default '' */
  readonly key?: string | undefined;
  /** Weight to hold, 1 to `limit`. @default 1 */
  readonly weight?: number | undefined;
}

/** Why a distributed acquire refused: core's reasons, or Redis unavailable under `closed`. */
export type RedisRejectionReason = RejectionReason | 'store-unavailable';

/** The answer to an acquire. */
export type RedisAcquireResult =
  | { readonly ok: true; readonly permit: LeasePermit }
  | {
      readonly ok: false;
      readonly reason: RedisRejectionReason;
      readonly retryAfterMs?: number;
      readonly degraded?: boolean;
    };

/** Emitted when a held lease turns out to be gone. */
export interface LeaseLostEvent {
  readonly key: string;
  readonly fence: number;
}

/** A concurrency limit across replicas. */
export interface RedisConcurrencyLimit {
  /** Takes a lease, waiting in the local line if allowed. Never rejects; refusals are values. */
  acquire(options?: RedisAcquireOptions): Promise<RedisAcquireResult>;
  /**
   * Runs `fn` holding a lease until it settles; throws the matching error if refused.
   * `fn` gets a signal that aborts with the caller's or when the lease is lost.
   */
  run<T>(
    fn: (context: { readonly signal: AbortSignal; readonly fence: number }) => T | PromiseLike<T>,
    options?: RedisAcquireOptions,
  ): Promise<T>;
  /** Permits held by this process now. */
  readonly active: number;
  /** Callers of this process waiting now. */
  readonly queued: number;
  /** The limit across replicas. */
  readonly limit: number;
  readonly onLeaseLost: Event<LeaseLostEvent>;
}

/** Creates a concurrency limit shared through Redis. */
export function redisConcurrencyLimit(
  options: RedisConcurrencyLimitOptions,
): RedisConcurrencyLimit {
  const { store, settings } = limitSettings(options);
  return new Limit(store, settings);
}

type Attempt =
  | { readonly ok: true; readonly permit: LeasePermit }
  | { readonly ok: false; readonly reason: 'queue-full'; readonly retryAfterMs: number }
  | { readonly ok: false; readonly reason: 'store-unavailable' | 'local'; readonly degraded: true };

const unavailable = Object.freeze({
  ok: false as const,
  reason: 'store-unavailable' as const,
  degraded: true,
});

class Limit implements RedisConcurrencyLimit, LeaseOwner {
  readonly #st: StoreInternals;
  readonly #s: LimitSettings;
  readonly #clock: Clock;
  // Local fallback limits (`local` policy), one per key while it holds permits.
  readonly #local = new Map<string, ConcurrencyLimit>();
  #active = 0;
  #queued = 0;
  readonly #lostE = new Emitter<LeaseLostEvent>();
  readonly onLeaseLost = this.#lostE.event;

  constructor(store: StoreInternals, settings: LimitSettings) {
    this.#st = store;
    this.#s = settings;
    this.#clock = store.clock;
  }

  get active(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#queued;
  }

  get limit(): number {
    return this.#s.limit;
  }

  async acquire(options?: RedisAcquireOptions): Promise<RedisAcquireResult> {
    const key = options?.key ?? '';
    const weight = options?.weight ?? 1;
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    if (!Number.isSafeInteger(weight) || weight < 1 || weight > this.#s.limit) {
      throw new SpillwayArgumentError('weight', `an integer from 1 to ${this.#s.limit}`, weight);
    }
    const signal = options?.signal;
    const d = options?.deadline;
    const expiresAt = d === undefined ? Infinity : typeof d === 'number' ? d : d.expiresAt;
    if (signal?.aborted === true) return { ok: false, reason: 'aborted' };
    if (expiresAt <= this.#clock.now()) return { ok: false, reason: 'deadline' };
    let r = await this.#attempt(key, weight);
    if (r.ok || r.reason !== 'queue-full') return this.#final(r, key, weight);
    const s = this.#s;
    if (this.#queued >= s.maxQueue) return r;
    this.#queued++;
    try {
      const waitUntil = Math.min(this.#clock.now() + s.maxQueueWaitMs, expiresAt);
      for (;;) {
        const pause = Math.min(r.retryAfterMs, s.pollMs) * (0.5 + Math.random() / 2);
        const now = this.#clock.now();
        if (now + pause >= waitUntil) {
          return { ok: false, reason: waitUntil === expiresAt ? 'deadline' : 'queue-timeout' };
        }
        try {
          await this.#clock.sleep(pause, signal);
        } catch {
          return { ok: false, reason: 'aborted' };
        }
        r = await this.#attempt(key, weight);
        if (r.ok || r.reason !== 'queue-full') return this.#final(r, key, weight);
      }
    } finally {
      this.#queued--;
    }
  }

  async run<T>(
    fn: (context: { readonly signal: AbortSignal; readonly fence: number }) => T | PromiseLike<T>,
    options?: RedisAcquireOptions,
  ): Promise<T> {
    const r = await this.acquire(options);
    if (!r.ok) {
      if (r.reason === 'store-unavailable') throw new StoreUnavailableError();
      throw rejectionError(r.reason, { retryAfterMs: r.retryAfterMs });
    }
    const permit = r.permit;
    const caller = options?.signal;
    const signal = caller === undefined ? permit.signal : AbortSignal.any([caller, permit.signal]);
    try {
      return await fn({ signal, fence: permit.fence });
    } finally {
      permit.release();
    }
  }

  async renewLease(permit: RedisLeasePermit): Promise<boolean | undefined> {
    // Through the clean-up lane: not refused at the in-flight cap, and sent as soon as the
    // client is ready again, for as long as the lease can still be alive.
    const r = await this.#st.gate.cleanup.ask(
      semRenewScript,
      { keys: this.#keys(permit.key), args: [permit.leaseId, this.#s.leaseTtlMs] },
      permit.expiresAt,
    );
    this.#st.note(r);
    if (isFailure(r)) return undefined;
    return r[0] === 1;
  }

  releaseLease(permit: RedisLeasePermit): void {
    this.#active--;
    if (permit.degraded) return;
    // Worth sending for up to a TTL from now: a renewal whose answer never came may have
    // extended the lease that long.
    this.#st.gate.cleanup.send(
      semReleaseScript,
      { keys: this.#keys(permit.key), args: [permit.leaseId] },
      this.#clock.now() + this.#s.leaseTtlMs,
    );
  }

  leaseLost(permit: RedisLeasePermit): void {
    if (this.#lostE.size > 0) this.#lostE.emit({ key: permit.key, fence: permit.fence });
  }

  /** Turns the `local` marker into a local permit (or a refusal). */
  #final(r: Attempt, key: string, weight: number): RedisAcquireResult {
    if (r.ok || r.reason !== 'local') return r as RedisAcquireResult;
    let local = this.#local.get(key);
    if (local === undefined) {
      local = concurrencyLimit({
        limit: Math.max(1, Math.floor(this.#s.limit / this.#st.replicas)),
        clock: this.#clock,
      });
      this.#local.set(key, local);
    }
    // Weighted holds take `weight` local slots, all or none.
    const slots: Permit[] = [];
    for (let i = 0; i < weight; i++) {
      const g = local.tryAcquire();
      if (!g.ok) break;
      slots.push(g.permit);
    }
    if (slots.length < weight) {
      for (const p of slots) p.release();
      this.#forget(key, local);
      return { ok: false, reason: 'queue-full', degraded: true };
    }
    const permit = this.#permit(key, `local-${uniqueId()}`, -1);
    // Through a local: a closure assigned straight to a property is allocated in V8's old
    // generation and keeps `slots` and `local` alive through young collections.
    const releaseSlots = (): void => {
      for (const p of slots) p.release();
      this.#forget(key, local);
    };
    permit.onRelease = releaseSlots;
    return { ok: true, permit };
  }

  #forget(key: string, local: ConcurrencyLimit): void {
    if (local.active === 0) this.#local.delete(key);
  }

  async #attempt(key: string, weight: number): Promise<Attempt> {
    const s = this.#s;
    const leaseId = leaseMember(weight, uniqueId());
    const keys = this.#keys(key);
    const r = await this.#st.gate.call(semAcquireScript, {
      keys,
      args: [s.limit, leaseId, weight, s.leaseTtlMs],
    });
    this.#st.note(r);
    if (isFailure(r)) {
      // A call that timed out, or whose connection failed after it was sent, may have taken
      // the lease before its expiry: give it back when Redis can. (One that reaches Redis
      // after its expiry takes nothing.)
      if (r.failed === 'timeout' || r.failed === 'error') {
        const until = this.#clock.now() + s.leaseTtlMs;
        this.#st.gate.cleanup.send(semReleaseScript, { keys, args: [leaseId] }, until);
      }
      if (s.policy === 'open') return { ok: true, permit: this.#permit(key, leaseId, -1) };
      if (s.policy === 'closed') return unavailable;
      return { ok: false, reason: 'local', degraded: true };
    }
    const [acquired = 0, , fence = 0, hint = -1] = r;
    if (acquired === 1) return { ok: true, permit: this.#permit(key, leaseId, fence) };
    return { ok: false, reason: 'queue-full', retryAfterMs: hint < 1 ? s.pollMs : hint };
  }

  #permit(key: string, leaseId: string, fence: number): RedisLeasePermit {
    this.#active++;
    return new RedisLeasePermit(
      this,
      { leaseId, key, fence },
      { clock: this.#clock, ttlMs: this.#s.leaseTtlMs, renewEveryMs: this.#s.renewEveryMs },
    );
  }

  #keys(key: string): [string, string] {
    const { prefix } = this.#st;
    const scope = { name: this.#s.name, id: key };
    return [redisKey(prefix, scope, 'lease:z'), redisKey(prefix, scope, 'lease:h')];
  }
}

/**
 * Lease ids unique across processes: 96 random bits drawn once per process, then a counter.
 * (Sixteen random bytes per acquire cost more CPU than the rest of the acquire's own work.)
 */
const idPrefix = randomBytes(12).toString('base64url');
let idCount = 0;

function uniqueId(): string {
  return `${idPrefix}${(++idCount).toString(36)}`;
}
