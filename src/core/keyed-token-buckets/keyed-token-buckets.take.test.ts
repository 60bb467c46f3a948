import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createVirtualClock, type VirtualClock } from '../../testing/virtual-clock.js';
import { RateLimitedError } from '../errors/rate-limited-error.js';
import { WaitLineFullError } from '../errors/wait-line-full-error.js';
import { memoryRateStore } from '../rate-store/memory-rate-store.js';
import type { RateDecision, RatePolicy, RateStore } from '../rate-store/rate-store.js';
import { keyedTokenBuckets } from './keyed-token-buckets.js';

function track(clock: VirtualClock, log: string[], name: string, p: Promise<void>): void {
  p.then(
    () => log.push(`${name}@${clock.now()}`),
    (e: unknown) => log.push(`${name}!${(e as { code?: string }).code ?? String(e)}`),
  );
}

describe('keyedTokenBuckets.take', () => {
  it('waits per key, oldest first, and keys do not wait for each other', async () => {
    const clock = createVirtualClock();
    const perKey = keyedTokenBuckets({ ratePerSec: 10, burst: 1, clock });
    const log: string[] = [];
    track(clock, log, 'a1', perKey.take('a'));
    track(clock, log, 'a2', perKey.take('a'));
    track(clock, log, 'a3', perKey.take('a'));
    track(clock, log, 'b1', perKey.take('b'));
    await clock.flush();
    expect(log).toEqual(['a1@0', 'b1@0']);
    expect(perKey.waiting).toBe(2);
    await clock.advance(200);
    expect(log).toEqual(['a1@0', 'b1@0', 'a2@100', 'a3@200']);
    expect(clock.pendingTimers).toBe(0);
  });

  it("tryTake does not barge on a key with waiters, and answers with the line's wait", async () => {
    const clock = createVirtualClock();
    const perKey = keyedTokenBuckets({ ratePerSec: 10, burst: 2, clock });
    perKey.tryTake('a', 2);
    const waiting = perKey.take('a', { n: 2 }); // due at 200
    await clock.advance(150);
    expect(perKey.tryTake('a')).toEqual({
      ok: false,
      remaining: 0,
      retryAfterMs: 150, // 50 ms for the waiter's turn, then 100 for this one's token
      limit: 2,
      resetMs: 250,
    });
    expect(perKey.tryTake('b').ok).toBe(true);
    await clock.advance(50);
    await waiting;
    expect(perKey.tryTake('a').ok).toBe(false);
  });

  it('never evicts a key with waiters: it is pinned while a million other keys pass', async () => {
    const clock = createVirtualClock();
    const store = memoryRateStore({ maxKeys: 100, clock });
    const perKey = keyedTokenBuckets({ ratePerSec: 1, burst: 2, store, name: 'api' });
    perKey.tryTake('slow', 2);
    const log: string[] = [];
    track(clock, log, 'slow', perKey.take('slow')); // due at 1 s
    for (let i = 0; i < 1_000_000; i++) perKey.tryTake(`k${i}`);
    expect(store.size('api')).toBe(100);
    await clock.advance(1_000);
    expect(log).toEqual(['slow@1000']);
    // Its bucket was kept: the waiter took the one token due. Evicted, the key would have come
    // back full and had a token to spare.
    expect(perKey.tryTake('slow').ok).toBe(false);
    await clock.advance(1_000);
    // Unpinned once its line emptied: evictable again like any other key.
    for (let i = 0; i < 100; i++) perKey.tryTake(`again${i}`);
    expect(perKey.tryTake('slow')).toMatchObject({ ok: true, remaining: 1 });
  });

  it('when maxKeys − 1 keys have waiters, a new key may not wait, but still takes what is there', async () => {
    const clock = createVirtualClock();
    const perKey = keyedTokenBuckets({ ratePerSec: 1, burst: 1, maxKeys: 3, clock });
    perKey.tryTake('a');
    perKey.tryTake('b');
    const a = perKey.take('a');
    const b = perKey.take('b');
    expect(perKey.tryTake('c').ok).toBe(true);
    await expect(perKey.take('c')).rejects.toBeInstanceOf(WaitLineFullError);
    await expect(perKey.take('d')).resolves.toBeUndefined(); // a token there: no wait, no line
    expect(perKey.tryTake('e').ok).toBe(true); // keys without waiters rotate through the free room
    await clock.advance(1_000);
    await Promise.all([a, b]);
  });

  it('bounds waiters across keys by maxWaiting', async () => {
    const clock = createVirtualClock();
    const perKey = keyedTokenBuckets({ ratePerSec: 1, burst: 1, maxWaiting: 2, clock });
    for (const k of ['a', 'b', 'c']) perKey.tryTake(k);
    const waiting = [perKey.take('a'), perKey.take('b')];
    await expect(perKey.take('c')).rejects.toMatchObject({
      code: 'SPILLWAY_E_WAIT_LINE_FULL',
      maxWaiting: 2,
      retryAfterMs: 1_000,
    });
    await clock.advance(1_000);
    await Promise.all(waiting);
  });

  it('aborted waiters leave nothing behind: no timer, no listener, no pin', async () => {
    const clock = createVirtualClock();
    const store = memoryRateStore({ maxKeys: 2, clock });
    const perKey = keyedTokenBuckets({ ratePerSec: 1, burst: 1, store });
    perKey.tryTake('a');
    const controllers = [new AbortController(), new AbortController()];
    const takes = controllers.map((c) => perKey.take('a', { signal: c.signal }));
    for (const c of controllers) c.abort();
    expect((await Promise.allSettled(takes)).map((r) => r.status)).toEqual([
      'rejected',
      'rejected',
    ]);
    expect(clock.pendingTimers).toBe(0);
    expect(perKey.waiting).toBe(0);
    for (const c of controllers) expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
    perKey.tryTake('b');
    perKey.tryTake('c'); // 'a' is evictable again: it goes
    expect(perKey.tryTake('a')).toMatchObject({ ok: true }); // back full
  });

  it('paces a key at its rate even when a token takes less than a tick (burst 1)', async () => {
    const clock = createVirtualClock();
    const perKey = keyedTokenBuckets({ ratePerSec: 2_000, burst: 1, clock });
    perKey.tryTake('k');
    let served = 0;
    const all = Array.from({ length: 100 }, () => perKey.take('k').then(() => served++));
    await clock.advance(50);
    expect(served).toBe(100);
    await Promise.all(all);
  });

  it('refuses at once what it could never grant in time, or could never grant', async () => {
    const clock = createVirtualClock();
    const perKey = keyedTokenBuckets({ ratePerSec: 10, burst: 2, clock });
    perKey.tryTake('a', 2);
    await expect(perKey.take('a', { maxWaitMs: 50 })).rejects.toMatchObject({
      code: 'SPILLWAY_E_RATE_LIMITED',
      retryAfterMs: 100,
    });
    await expect(perKey.take('a', { n: 3 })).rejects.toThrow(/at most burst \(2\)/);
    await expect(perKey.take(7 as unknown as string)).rejects.toThrow(/`key` to be a string/);
    expect(perKey.waiting).toBe(0);
    expect(() => keyedTokenBuckets({ ratePerSec: 1, burst: 1, maxWaiting: -1 })).toThrow(
      /Expected `maxWaiting` to be an integer of 0 or more, got -1 \(number\)/,
    );
  });

  it('over a store that answers with promises, a take does not wait: admitted or refused', async () => {
    const clock = createVirtualClock();
    const inner = memoryRateStore({ clock });
    const remote: RateStore<Promise<RateDecision>> = {
      take: (key: string, n: number, policy: RatePolicy) =>
        Promise.resolve(inner.take(key, n, policy)),
    };
    const perKey = keyedTokenBuckets({ ratePerSec: 1, burst: 1, store: remote, clock });
    await expect(perKey.take('x')).resolves.toBeUndefined();
    const refused = perKey.take('x', { maxWaitMs: 5_000 });
    await expect(refused).rejects.toBeInstanceOf(RateLimitedError);
    await expect(refused).rejects.toMatchObject({ retryAfterMs: 1_000 });
    expect(clock.pendingTimers).toBe(0);
  });
});
