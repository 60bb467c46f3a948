/**
 * Two local caches that save Redis round trips without loosening the limit:
 *
 * - **Deny cache.** After Redis refuses cost `n` with a wait, refuse cost `n` for that key
 *   locally until the wait has passed. Exact for every algorithm here: only admissions happen
 *   elsewhere, and they never free capacity earlier. Entries are trusted for at most
 *   `maxAgeMs` (bounds staleness if limits change) and timed from when the call was *sent*,
 *   so they end early rather than late.
 * - **Leases.** For a hot key (called again within `maxHoldMs`), ask Redis for a small batch
 *   and spend it locally for up to `maxHoldMs` (never past a fixed window's end). Tokens are
 *   counted in Redis when leased, so a fixed window still admits at most N; a token bucket
 *   can admit tokens up to `maxHoldMs` after they were due, so in any interval Δ it admits at
 *   most burst + rate × (Δ + maxHoldMs). Unspent tokens expire unused (under-admission).
 *
 * @module
 */
import { BoundedMap } from './bounded-map.js';

interface Denial {
  /** Local time at which the refused cost could succeed. */
  readonly until: number;
  /** Local time after which the entry is no longer trusted. */
  readonly trustUntil: number;
  readonly minCost: number;
}

/** Remembers refusals per key (the wait is exact for the refused cost only). */
export class DenyCache {
  readonly #map: BoundedMap<Denial>;
  readonly #maxAgeMs: number;

  constructor(maxKeys: number, maxAgeMs: number) {
    this.#map = new BoundedMap(maxKeys);
    this.#maxAgeMs = maxAgeMs;
  }

  /**
   * Ms to wait if `n` on `key` is still known to be refused now, else undefined. `key`
   * includes the limit's parameters, so a changed limit never meets an old entry.
   */
  check(key: string, n: number, now: number): number | undefined {
    const d = this.#map.get(key);
    if (d === undefined) return undefined;
    if (now >= d.trustUntil) {
      this.#map.delete(key);
      return undefined;
    }
    // A larger cost is refused too, but its exact wait is longer: ask Redis for it.
    if (n !== d.minCost) return undefined;
    const wait = Math.ceil(d.until - now);
    return wait < 1 ? 1 : wait;
  }

  /** Forgets `key` (its quota was reset or rewarded: the remembered wait no longer holds). */
  forget(key: string): void {
    this.#map.delete(key);
  }

  /** Records that `n` on `key` was refused by a call sent at `sentAt`, for `retryAfterMs`. */
  remember(
    key: string,
    n: number,
    at: { readonly sentAt: number; readonly retryAfterMs: number },
  ): void {
    const until = at.sentAt + at.retryAfterMs;
    this.#map.set(key, {
      until,
      trustUntil: Math.min(until, at.sentAt + this.#maxAgeMs),
      minCost: n,
    });
  }
}

/** A key's local lease: tokens granted by Redis, spendable here until `expiresAt`. */
export interface Lease {
  tokens: number;
  expiresAt: number;
  /** What Redis said was left after the last grant (sizes the next batch). */
  remote: number;
  /** When the key was last asked for (a key asked twice within maxHoldMs is hot). */
  lastAskedAt: number;
}

/** Leases per key. */
export class LeaseTable {
  readonly #map: BoundedMap<Lease>;
  readonly maxBatch: number;
  readonly maxHoldMs: number;
  readonly #shares: number;

  constructor(settings: {
    readonly maxKeys: number;
    readonly maxBatch: number;
    readonly maxHoldMs: number;
    readonly replicas: number;
  }) {
    this.#map = new BoundedMap(settings.maxKeys);
    this.maxBatch = settings.maxBatch;
    this.maxHoldMs = settings.maxHoldMs;
    this.#shares = 2 * settings.replicas;
  }

  /** Takes `n` from a live lease; returns what is left there, or -1 when it cannot. */
  spend(key: string, n: number, now: number): number {
    const l = this.#map.get(key);
    if (l === undefined || now >= l.expiresAt || l.tokens < n) return -1;
    l.tokens -= n;
    l.lastAskedAt = now;
    return l.tokens;
  }

  /**
   * How many tokens to ask Redis for: `n`, or for a hot key a batch of at most `maxBatch`
   * and at most a fair share of what Redis last said was left (remaining ÷ 2·replicas), so
   * one replica cannot hoard the end of a window.
   */
  want(key: string, n: number, now: number): number {
    const l = this.#map.get(key);
    if (l === undefined || now - l.lastAskedAt > this.maxHoldMs) return n;
    const share = Math.floor(l.remote / this.#shares);
    const batch = Math.min(this.maxBatch, share);
    return batch > n ? batch : n;
  }

  /** Records a grant of `granted` (of which `n` are spent now), valid until `expiresAt`. */
  grant(
    key: string,
    values: { readonly granted: number; readonly n: number; readonly remote: number },
    times: { readonly now: number; readonly expiresAt: number },
  ): void {
    this.#map.set(key, {
      tokens: values.granted - values.n,
      expiresAt: times.expiresAt,
      remote: values.remote,
      lastAskedAt: times.now,
    });
  }

  /** Drops `key`'s lease (its quota was managed: leased tokens no longer match Redis). */
  forget(key: string): void {
    this.#map.delete(key);
  }

  /** Marks a refused ask (so the key stays hot, with no tokens). */
  asked(key: string, now: number): void {
    this.#map.set(key, { tokens: 0, expiresAt: 0, remote: 0, lastAskedAt: now });
  }
}
