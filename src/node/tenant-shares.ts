/**
 * Isolation of capacity between clients of one route: no key may hold more than `maxShare` of
 * the route's slots, so a tenant within its rate quota but holding slots long (slow queries,
 * large uploads) cannot take the slots of the others. With `borrow`, a key over its share may
 * still take a slot nobody else wants — free, with nobody in line — and gives it back as its
 * work finishes: once others arrive, its next request is refused while they are served.
 *
 * The count per key holds only keys with work admitted on the route, so the map never holds
 * more entries than the route has slots in use: bounded by the route's limit, with nothing to
 * evict.
 *
 * @module
 */
import type { ConcurrencyLimit } from '../index.js';
import { SpillwayConfigError } from '../index.js';

/** A route's `tenantShare` option. */
export interface TenantShareOptions {
  /** The largest fraction of the route's slots one client key may hold, in (0, 1]. */
  readonly maxShare: number;
  /**
   * Let a key over its share take a slot that is free while nobody waits for one (it gives it
   * back as its work finishes, and is held to its share again once others arrive). @default false
   */
  readonly borrow?: boolean;
}

/** Slots held per key on one route. */
export class TenantShares {
  readonly maxShare: number;
  readonly borrow: boolean;
  readonly #held = new Map<string, number>();

  constructor(route: string, options: TenantShareOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new SpillwayConfigError(`${route}.tenantShare`, '{ maxShare, borrow? }', options);
    }
    const { maxShare, borrow = false } = options;
    if (typeof maxShare !== 'number' || !(maxShare > 0 && maxShare <= 1)) {
      throw new SpillwayConfigError(
        `${route}.tenantShare.maxShare`,
        'a number in (0, 1]',
        maxShare,
      );
    }
    if (typeof borrow !== 'boolean') {
      throw new SpillwayConfigError(`${route}.tenantShare.borrow`, 'a boolean', borrow);
    }
    this.maxShare = maxShare;
    this.borrow = borrow;
  }

  /** Slots `key` holds now. */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /** Keys holding slots now (at most the route's slots in use). */
  get size(): number {
    return this.#held.size;
  }

  /**
   * Whether `key` may take one more slot of `limiter`: under its share (at least one slot),
   * or, borrowing, while a slot is free and nobody waits.
   */
  mayTake(key: string, limiter: ConcurrencyLimit, waiting: number): boolean {
    const share = Math.max(1, Math.floor(this.maxShare * limiter.limit));
    if (this.held(key) < share) return true;
    return this.borrow && waiting === 0 && limiter.active < limiter.limit;
  }

  /** `key` took a slot. */
  take(key: string): void {
    this.#held.set(key, this.held(key) + 1);
  }

  /** `key` gave one back. */
  give(key: string): void {
    const n = this.held(key) - 1;
    if (n > 0) this.#held.set(key, n);
    else this.#held.delete(key);
  }
}
