/**
 * A permit of the distributed concurrency limit: a lease in Redis with an expiry, renewed in
 * the background while held, released once (idempotent, `Disposable`). If a renewal finds the
 * lease gone (it expired during a long pause, or Redis lost its state), the permit is `lost`
 * and its `signal` aborts so the work can stop. Its `fence` is strictly increasing per
 * semaphore: a downstream that must never accept two holders' writes can reject any write
 * carrying a fence lower than the highest it has seen.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../core/clock/clock.js';
import type { Permit } from '../core/concurrency-limit/permit.js';

/** A held lease. */
export interface LeasePermit extends Permit {
  /** Fencing token, strictly increasing per semaphore; -1 when a failure policy granted it. */
  readonly fence: number;
  /** True when the failure policy granted it (Redis could not be asked). */
  readonly degraded: boolean;
  /** True once a renewal found the lease gone (or it could not be renewed within its TTL). */
  readonly lost: boolean;
  /** Aborts when the lease is lost; pass it to the work. */
  readonly signal: AbortSignal;
  /** Extends the lease now; resolves false when it is lost (or already released). */
  renew(): Promise<boolean>;
}

/** What a lease permit calls back into (the limit that issued it). */
export interface LeaseOwner {
  /** One renewal: true renewed, false lost, undefined when Redis could not be asked. */
  renewLease(permit: RedisLeasePermit): Promise<boolean | undefined>;
  releaseLease(permit: RedisLeasePermit): void;
  leaseLost(permit: RedisLeasePermit): void;
}

/** The limit's permit. */
export class RedisLeasePermit implements LeasePermit {
  readonly fence: number;
  readonly degraded: boolean;
  readonly leaseId: string;
  readonly key: string;
  readonly #owner: LeaseOwner;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #controller = new AbortController();
  #renewedAt: number;
  #timer: TimerHandle | undefined;
  #released = false;
  #lost = false;
  /** Called once on release (the local fallback's own permit, for `local` grants). */
  onRelease: (() => void) | undefined;

  constructor(
    owner: LeaseOwner,
    lease: { readonly leaseId: string; readonly key: string; readonly fence: number },
    timing: { readonly clock: Clock; readonly ttlMs: number; readonly renewEveryMs: number },
  ) {
    this.#owner = owner;
    this.leaseId = lease.leaseId;
    this.key = lease.key;
    this.fence = lease.fence;
    this.degraded = lease.fence < 0;
    this.#clock = timing.clock;
    this.#ttlMs = timing.ttlMs;
    this.#renewedAt = timing.clock.now();
    if (!this.degraded) this.#schedule(timing.renewEveryMs);
  }

  get released(): boolean {
    return this.#released;
  }

  get lost(): boolean {
    return this.#lost;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** When the lease expires in Redis unless renewed, as best known here (local ms). */
  get expiresAt(): number {
    return this.#renewedAt + this.#ttlMs;
  }

  async renew(): Promise<boolean> {
    if (this.#released || this.#lost) return false;
    if (this.degraded) return true;
    const ok = await this.#owner.renewLease(this);
    // Released meanwhile: whatever the renewal found says nothing about a lease still held.
    if (this.#released) return false;
    if (ok === true) this.#renewedAt = this.#clock.now();
    else if (ok === false || this.#clock.now() - this.#renewedAt >= this.#ttlMs) this.#lose();
    return !this.#lost && !this.#released;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#owner.releaseLease(this);
    this.onRelease?.();
  }

  [Symbol.dispose](): void {
    this.release();
  }

  #schedule(everyMs: number): void {
    this.#timer = this.#clock.setTimer(
      everyMs,
      () => {
        this.#timer = undefined;
        if (this.#released || this.#lost) return;
        void this.renew().then((held) => {
          if (held) this.#schedule(everyMs);
        });
      },
      { unref: true },
    );
  }

  #lose(): void {
    if (this.#lost) return;
    this.#lost = true;
    this.#controller.abort(new Error('The lease was lost (expired or forgotten by Redis)'));
    this.#owner.leaseLost(this);
  }
}
