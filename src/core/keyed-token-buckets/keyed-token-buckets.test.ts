import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { memoryRateStore } from '../rate-store/memory-rate-store.js';
import type { RateDecision, RatePolicy, RateStore } from '../rate-store/rate-store.js';
import { keyedTokenBuckets } from './keyed-token-buckets.js';

describe('keyedTokenBuckets', () => {
  it('gives every key its own bucket', () => {
    const clock = createVirtualClock();
    const perClient = keyedTokenBuckets({ ratePerSec: 10, burst: 2, clock });
    expect(perClient.tryTake('a')).toMatchObject({ ok: true, remaining: 1, limit: 2 });
    expect(perClient.tryTake('a')).toMatchObject({ ok: true, remaining: 0 });
    expect(perClient.tryTake('a')).toEqual({
      ok: false,
      remaining: 0,
      retryAfterMs: 100,
      limit: 2,
      resetMs: 200,
    });
    expect(perClient.tryTake('b')).toMatchObject({ ok: true, remaining: 1, resetMs: 100 });
  });

  it('stays within maxKeys with a million distinct keys, evicting the least recently used', () => {
    const clock = createVirtualClock();
    const store = memoryRateStore({ maxKeys: 1_000, clock });
    const perClient = keyedTokenBuckets({ ratePerSec: 1, burst: 1, store, name: 'api' });
    perClient.tryTake('hot');
    for (let i = 0; i < 1_000_000; i++) {
      perClient.tryTake(`client-${i}`);
      if (i % 500 === 0) perClient.tryTake('hot'); // keeps 'hot' recent, so it is never evicted
    }
    expect(store.size('api')).toBe(1_000);
    expect(store.evictions('api')).toBeGreaterThan(998_000);
    expect(perClient.tryTake('hot').ok).toBe(false); // its bucket survived: still empty
  });

  it('validates keys and takes', () => {
    const perClient = keyedTokenBuckets({ ratePerSec: 1, burst: 3, clock: createVirtualClock() });
    expect(() => perClient.tryTake('k', 4)).toThrow(/at most burst \(3\)/);
    expect(() => perClient.tryTake('k', 0)).toThrow(/`n`/);
    expect(() => perClient.tryTake(undefined as unknown as string)).toThrow(/`key` to be a string/);
    expect(() => keyedTokenBuckets({ ratePerSec: 1, burst: 1, maxKeys: 0 })).toThrow(/`maxKeys`/);
    expect(() => keyedTokenBuckets({ ratePerSec: 1, burst: 1, store: {} as never })).toThrow(
      /`store`/,
    );
  });

  it('works unchanged over an asynchronous store, and reports refusals to listeners', async () => {
    const clock = createVirtualClock();
    const inner = memoryRateStore({ clock });
    const remote: RateStore<Promise<RateDecision>> = {
      take: (key: string, n: number, policy: RatePolicy) =>
        Promise.resolve(inner.take(key, n, policy)),
    };
    const perClient = keyedTokenBuckets({ ratePerSec: 1, burst: 1, store: remote });
    const refused: string[] = [];
    perClient.onThrottle((e) => refused.push(e.key));
    expect((await perClient.tryTake('x')).ok).toBe(true);
    expect(await perClient.tryTake('x')).toMatchObject({ ok: false, retryAfterMs: 1000 });
    expect(refused).toEqual(['x']);
  });

  it('a store serves several limiters, each under its own name, and bounds their number', () => {
    const clock = createVirtualClock();
    const store = memoryRateStore({ clock, maxLimiters: 2 });
    const a = keyedTokenBuckets({ ratePerSec: 1, burst: 1, store, name: 'a' });
    const b = keyedTokenBuckets({ ratePerSec: 1, burst: 1, store, name: 'b' });
    const c = keyedTokenBuckets({ ratePerSec: 1, burst: 1, store, name: 'c' });
    expect(a.tryTake('k').ok).toBe(true);
    expect(b.tryTake('k').ok).toBe(true);
    expect(a.tryTake('k').ok).toBe(false);
    expect(() => c.tryTake('k')).toThrow(/at most 2 limiters/);
  });
});
