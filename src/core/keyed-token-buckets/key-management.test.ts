import { describe, expect, it } from 'vitest';
import { keyManagementConformance } from '../../testing/key-management-conformance.js';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { memoryRateStore } from '../rate-store/memory-rate-store.js';
import type { RateDecision, RateStore } from '../rate-store/rate-store.js';
import { keyedTokenBuckets } from './keyed-token-buckets.js';

describe('keyedTokenBuckets key management (memory store)', () => {
  const setup = () => {
    const clock = createVirtualClock();
    // 10 per second, burst 5: a token every 100 ms.
    const q = keyedTokenBuckets({ ratePerSec: 10, burst: 5, clock });
    return { clock, q };
  };

  it('get reads a key without taking from it; a key never seen is full', () => {
    const { q } = setup();
    expect(q.get('new')).toEqual({ remaining: 5, limit: 5, retryAfterMs: 0, resetMs: 0 });
    q.tryTake('a', 3);
    expect(q.get('a')).toEqual({ remaining: 2, limit: 5, retryAfterMs: 0, resetMs: 300 });
    expect(q.get('a')).toEqual(q.get('a'));
    expect(q.tryTake('a', 2).ok).toBe(true);
    expect(q.get('a')).toMatchObject({ remaining: 0, retryAfterMs: 100, resetMs: 500 });
  });

  it('reset gives a spent key its full bucket back', () => {
    const { q } = setup();
    q.tryTake('a', 5);
    expect(q.tryTake('a').ok).toBe(false);
    q.reset('a');
    expect(q.get('a').remaining).toBe(5);
    for (let i = 0; i < 5; i++) expect(q.tryTake('a').ok).toBe(true);
    expect(q.tryTake('a').ok).toBe(false);
    q.reset('never-seen'); // nothing to forget, no error
  });

  it('penalize goes below zero: a debt that refills at the rate, every take refused meanwhile', () => {
    const { clock, q } = setup();
    // Full (5) minus 8: a debt of 3, so one token is 400 ms away.
    expect(q.penalize('a', 8)).toEqual({
      remaining: 0,
      limit: 5,
      retryAfterMs: 400,
      resetMs: 800,
    });
    expect(q.tryTake('a')).toMatchObject({ ok: false, retryAfterMs: 400 });
    clock.advanceSync(399);
    expect(q.tryTake('a').ok).toBe(false);
    clock.advanceSync(1);
    expect(q.tryTake('a').ok).toBe(true);
    expect(q.tryTake('a').ok).toBe(false);
  });

  it('reward gives tokens back, never above burst', () => {
    const { q } = setup();
    q.tryTake('a', 5);
    expect(q.reward('a', 2).remaining).toBe(2);
    expect(q.reward('a', 100)).toEqual({ remaining: 5, limit: 5, retryAfterMs: 0, resetMs: 0 });
    for (let i = 0; i < 5; i++) expect(q.tryTake('a').ok).toBe(true);
    expect(q.tryTake('a').ok).toBe(false);
    // A reward pays a debt off first.
    q.penalize('b', 7); // 5 - 7 = -2
    expect(q.reward('b', 3).remaining).toBe(1);
  });

  it('refuses bad keys and token counts by name', () => {
    const { q } = setup();
    expect(() => q.penalize('a', 0)).toThrow(/`tokens`/);
    expect(() => q.reward('a', 1.5)).toThrow(/`tokens`/);
    expect(() => q.penalize('a', 2e9)).toThrow(/`tokens`/);
    expect(() => q.get(1 as unknown as string)).toThrow(/`key`/);
  });

  it('says so when a custom store only takes', () => {
    const takeOnly: RateStore<RateDecision> = {
      take: () => ({ ok: true, remaining: 0, limit: 1, resetMs: 0 }),
    };
    const q = keyedTokenBuckets({ ratePerSec: 1, burst: 1, store: takeOnly });
    expect(() => q.reset('a')).toThrow(/peek, reset and adjust/);
  });

  it('a reset key with waiters keeps its pin: new keys never evict it', async () => {
    const clock = createVirtualClock();
    const q = keyedTokenBuckets({ ratePerSec: 10, burst: 5, maxKeys: 3, clock });
    q.tryTake('a', 5);
    let served = false;
    const waiting = q.take('a', { n: 3 }).then(() => (served = true));
    q.reset('a');
    for (const other of ['b', 'c', 'd', 'e']) q.tryTake(other);
    await clock.advance(300);
    await waiting;
    expect(served).toBe(true);
    // Still the reset bucket (full, the waiter served from what accrued since): had it been
    // evicted, the waiter would have met a new bucket and left 2.
    expect(q.get('a').remaining).toBe(5);
  });
});

describe('memoryRateStore key management conforms', () => {
  const store = memoryRateStore({ clock: createVirtualClock() });
  for (const c of keyManagementConformance({ createStore: () => store })) it(c.name, c.run);
});
