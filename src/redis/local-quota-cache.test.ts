// The local caches alone: a cached refusal answers only the exact refused cost, for no longer
// than the wait Redis gave (timed from the send) and never past its trust age; leases spend
// locally until they expire, and batches are sized by a fair share of what Redis has left.
import { describe, expect, it } from 'vitest';
import { DenyCache, LeaseTable } from './local-quota-cache.js';

describe('DenyCache', () => {
  it('refuses the same cost until the wait has passed, timed from the send', () => {
    const d = new DenyCache(10, 1_000);
    d.remember('k', 2, { sentAt: 100, retryAfterMs: 300 });
    expect(d.check('k', 2, 150)).toBe(250);
    expect(d.check('k', 2, 399.5)).toBe(1);
    expect(d.check('k', 2, 400)).toBeUndefined();
  });

  it('asks Redis for any other cost (a larger one has a longer, unknown wait)', () => {
    const d = new DenyCache(10, 1_000);
    d.remember('k', 2, { sentAt: 0, retryAfterMs: 300 });
    expect(d.check('k', 1, 10)).toBeUndefined();
    expect(d.check('k', 3, 10)).toBeUndefined();
    expect(d.check('other', 2, 10)).toBeUndefined();
  });

  it('trusts an entry for at most maxAgeMs, and holds at most maxKeys', () => {
    const d = new DenyCache(2, 100);
    d.remember('a', 1, { sentAt: 0, retryAfterMs: 5_000 });
    expect(d.check('a', 1, 99)).toBe(4_901);
    expect(d.check('a', 1, 100)).toBeUndefined();
    d.remember('a', 1, { sentAt: 0, retryAfterMs: 50 });
    d.remember('b', 1, { sentAt: 0, retryAfterMs: 50 });
    d.remember('c', 1, { sentAt: 0, retryAfterMs: 50 });
    expect(d.check('a', 1, 1)).toBeUndefined();
    expect(d.check('c', 1, 1)).toBe(49);
  });
});

describe('LeaseTable', () => {
  const table = () => new LeaseTable({ maxKeys: 10, maxBatch: 8, maxHoldMs: 50, replicas: 2 });

  it('asks for just n the first time, and a fair-share batch when the key is hot', () => {
    const t = table();
    expect(t.want('k', 1, 0)).toBe(1);
    t.grant('k', { granted: 1, n: 1, remote: 40 }, { now: 0, expiresAt: 50 });
    expect(t.want('k', 1, 10)).toBe(8); // min(maxBatch 8, 40 / (2 × 2 replicas) = 10)
    t.grant('k', { granted: 1, n: 1, remote: 12 }, { now: 10, expiresAt: 60 });
    expect(t.want('k', 1, 20)).toBe(3); // 12 / 4
    expect(t.want('k', 5, 20)).toBe(5); // never below n
    expect(t.want('k', 1, 100)).toBe(1); // no longer hot
  });

  it('spends leased tokens locally until they run out or expire', () => {
    const t = table();
    t.grant('k', { granted: 4, n: 1, remote: 0 }, { now: 0, expiresAt: 50 });
    expect(t.spend('k', 2, 10)).toBe(1);
    expect(t.spend('k', 2, 10)).toBe(-1);
    expect(t.spend('k', 1, 10)).toBe(0);
    t.grant('k', { granted: 4, n: 1, remote: 0 }, { now: 0, expiresAt: 50 });
    expect(t.spend('k', 1, 50)).toBe(-1);
  });
});
