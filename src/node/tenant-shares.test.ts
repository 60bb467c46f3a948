// TenantShares on its own: the share in slots, borrowing, and a map that holds only keys with
// slots (bounded by the slots in use, with nothing to evict).
import { describe, expect, it } from 'vitest';
import { concurrencyLimit } from '../index.js';
import { TenantShares } from './tenant-shares.js';

describe('TenantShares', () => {
  it('holds a key to its share of the limit, at least one slot', () => {
    const limiter = concurrencyLimit({ limit: 10 });
    const shares = new TenantShares('r', { maxShare: 0.25 });
    for (let i = 0; i < 2; i++) {
      expect(shares.mayTake('a', limiter, 0)).toBe(true);
      shares.take('a');
    }
    expect(shares.mayTake('a', limiter, 0)).toBe(false); // floor(0.25 × 10) = 2
    expect(new TenantShares('r', { maxShare: 0.01 }).mayTake('z', limiter, 0)).toBe(true);
  });

  it('borrows a free slot only while nobody waits', () => {
    const limiter = concurrencyLimit({ limit: 2, maxQueue: 1 });
    const shares = new TenantShares('r', { maxShare: 0.5, borrow: true });
    shares.take('a');
    limiter.tryAcquire();
    expect(shares.mayTake('a', limiter, 0)).toBe(true);
    expect(shares.mayTake('a', limiter, 1)).toBe(false);
    limiter.tryAcquire(); // every slot taken
    expect(shares.mayTake('a', limiter, 0)).toBe(false);
  });

  it('forgets a key once it holds nothing, so it holds no more keys than slots in use', () => {
    const shares = new TenantShares('r', { maxShare: 1 });
    for (const key of ['a', 'b', 'a']) shares.take(key);
    expect(shares.size).toBe(2);
    for (const key of ['a', 'b', 'a']) shares.give(key);
    expect(shares.size).toBe(0);
    expect(shares.held('a')).toBe(0);
  });

  it('names a bad option', () => {
    expect(() => new TenantShares('r', { maxShare: 1.5 })).toThrow(/`r.tenantShare.maxShare`/);
    expect(() => new TenantShares('r', { maxShare: 0.5, borrow: 1 as never })).toThrow(
      /`r.tenantShare.borrow`/,
    );
    expect(() => new TenantShares('r', null as never)).toThrow(/`r.tenantShare`/);
  });
});
