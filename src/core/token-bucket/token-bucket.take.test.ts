import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createVirtualClock, type VirtualClock } from '../../testing/virtual-clock.js';
import type { Clock } from '../clock/clock.js';
import { deadline } from '../deadline/deadline.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { RateLimitedError } from '../errors/rate-limited-error.js';
import { DeadlineExceededError } from '../errors/rejected-error.js';
import { WaitLineFullError } from '../errors/wait-line-full-error.js';
import { tokenBucket } from './token-bucket.js';

/** Records when each promise settled, and how. */
function track(clock: VirtualClock, log: string[], name: string, p: Promise<void>): void {
  p.then(
    () => log.push(`${name}@${clock.now()}`),
    (e: unknown) => log.push(`${name}!${(e as { code?: string }).code ?? String(e)}`),
  );
}

describe('tokenBucket.take', () => {
  it('resolves at once while tokens are there, then exactly when they are due', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 10, burst: 2, clock });
    await bucket.take();
    await bucket.take();
    const log: string[] = [];
    track(clock, log, 'a', bucket.take());
    track(clock, log, 'b', bucket.take({ n: 2 }));
    expect(bucket.waiting).toBe(2);
    await clock.advance(99);
    expect(log).toEqual([]);
    await clock.advance(1);
    expect(log).toEqual(['a@100']);
    await clock.advance(200);
    expect(log).toEqual(['a@100', 'b@300']);
    expect(bucket.waiting).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('serves waiters in arrival order: a small later take never overtakes a large earlier one', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 1_000, burst: 5, clock });
    bucket.tryTake(5);
    const log: string[] = [];
    track(clock, log, 'five', bucket.take({ n: 5 }));
    track(clock, log, 'one', bucket.take());
    track(clock, log, 'two', bucket.take({ n: 2 }));
    await clock.advance(10);
    expect(log).toEqual(['five@5', 'one@6', 'two@8']);
  });

  it('paces at the configured rate even when a token takes less than a timer tick (burst 1)', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 2_000, burst: 1, clock });
    bucket.tryTake();
    let served = 0;
    const all = Array.from({ length: 100 }, () => bucket.take().then(() => served++));
    await clock.advance(50); // 2 tokens a millisecond, served on 1 ms ticks: none lost to the cap
    expect(served).toBe(100);
    await Promise.all(all);
  });

  it('a timer that fires late loses no tokens to the cap: the rate holds', async () => {
    const clock = createVirtualClock();
    // Every timer fires 20 ms late, as on a busy event loop.
    const late: Clock = {
      now: () => clock.now(),
      wallNow: () => clock.wallNow(),
      setTimer: (ms, fn) => clock.setTimer(ms + 20, fn),
      clearTimer: (handle) => clock.clearTimer(handle),
      sleep: (ms, signal) => clock.sleep(ms, signal),
      timeoutSignal: (ms) => clock.timeoutSignal(ms),
    };
    const bucket = tokenBucket({ ratePerSec: 1_000, burst: 5, clock: late });
    bucket.tryTake(5);
    let served = 0;
    const all = Array.from({ length: 100 }, () => bucket.take().then(() => served++));
    await clock.advance(21);
    expect(served).toBe(21); // all that came due, not burst's worth
    await clock.advance(100);
    expect(served).toBe(100);
    await Promise.all(all);
    expect(bucket.available).toBeLessThanOrEqual(5);
  });

  it('tryTake does not barge while someone waits; its retryAfterMs counts the line', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 1_000, burst: 4, clock });
    bucket.tryTake(4);
    const waiter = bucket.take({ n: 3 });
    await clock.advance(2); // 2 tokens there, but they are the waiter's
    expect(bucket.tryTake()).toEqual({ ok: false, retryAfterMs: 2 });
    await clock.advance(1);
    await waiter;
    expect(bucket.tryTake().ok).toBe(false); // the waiter took all three
    await clock.advance(1);
    expect(bucket.tryTake()).toEqual({ ok: true, remaining: 0 });
  });

  it('refuses at once when the wait would exceed maxWaitMs, taking nothing and arming nothing', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 10, burst: 2, clock });
    bucket.tryTake(2);
    const first = bucket.take({ maxWaitMs: 100 }); // due at 100: accepted
    const refused = bucket.take({ maxWaitMs: 150 }); // due at 200: refused now
    await expect(refused).rejects.toBeInstanceOf(RateLimitedError);
    await expect(refused).rejects.toMatchObject({ retryAfterMs: 200 });
    expect(bucket.waiting).toBe(1);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(100);
    await first;
    const alone = bucket.take({ maxWaitMs: 99 }); // empty line, 100 ms to the next token
    await expect(alone).rejects.toMatchObject({
      code: 'SPILLWAY_E_RATE_LIMITED',
      retryAfterMs: 100,
    });
    await clock.advance(100);
    expect(bucket.tryTake().ok).toBe(true); // the refusals consumed nothing
  });

  it('refuses at once a take its deadline cannot wait for (a time or a Deadline)', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 10, burst: 1, clock });
    bucket.tryTake();
    await expect(bucket.take({ deadline: 99 })).rejects.toBeInstanceOf(DeadlineExceededError);
    const d = deadline({ timeoutMs: 50, clock });
    await expect(bucket.take({ deadline: d })).rejects.toBeInstanceOf(DeadlineExceededError);
    d.dispose();
    await expect(bucket.take({ deadline: 0 })).rejects.toBeInstanceOf(DeadlineExceededError);
    const ok = bucket.take({ deadline: 100 });
    await clock.advance(100);
    await expect(ok).resolves.toBeUndefined();
  });

  it("a Deadline's signal is the take's signal when none is given", async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 1, burst: 1, clock });
    bucket.tryTake();
    const caller = new AbortController();
    const d = deadline({ timeoutMs: 5_000, signal: caller.signal, clock });
    const waiting = bucket.take({ deadline: d });
    caller.abort(new Error('client left'));
    await expect(waiting).rejects.toThrow('client left');
    expect(getEventListeners(d.signal, 'abort')).toHaveLength(0);
    expect(bucket.waiting).toBe(0);
  });

  it('bounds the line: one more than maxWaiting is refused with a stable code', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 10, burst: 1, maxWaiting: 2, clock });
    bucket.tryTake();
    const waiting = [bucket.take(), bucket.take()];
    const full = bucket.take();
    await expect(full).rejects.toBeInstanceOf(WaitLineFullError);
    await expect(full).rejects.toMatchObject({
      code: 'SPILLWAY_E_WAIT_LINE_FULL',
      maxWaiting: 2,
      retryAfterMs: 300,
    });
    await clock.advance(200);
    await Promise.all(waiting);
    const none = tokenBucket({ ratePerSec: 10, burst: 1, maxWaiting: 0, clock });
    none.tryTake();
    await expect(none.take()).rejects.toBeInstanceOf(WaitLineFullError);
  });

  it('an aborted waiter leaves at once: no timer, no listener, and the next one moves up', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 1_000, burst: 5, clock });
    bucket.tryTake(5);
    const head = new AbortController();
    const log: string[] = [];
    track(clock, log, 'head', bucket.take({ n: 5, signal: head.signal }));
    track(clock, log, 'next', bucket.take({ n: 2 }));
    await clock.advance(3);
    head.abort(new Error('gone'));
    await clock.flush();
    // The 3 tokens saved for the head were not lost: the next waiter had its 2 at once.
    expect(log).toEqual(['head!Error: gone', 'next@3']);
    expect(getEventListeners(head.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers).toBe(0);
    expect(bucket.available).toBe(1);
  });

  it('every waiter aborted leaves nothing behind', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 1, burst: 1, clock });
    bucket.tryTake();
    const controllers = Array.from({ length: 50 }, () => new AbortController());
    const takes = controllers.map((c) => bucket.take({ signal: c.signal }));
    expect(clock.pendingTimers).toBe(1); // one timer for the whole line
    for (const c of controllers.reverse()) c.abort();
    const results = await Promise.allSettled(takes);
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(clock.pendingTimers).toBe(0);
    expect(bucket.waiting).toBe(0);
    for (const c of controllers) expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
    await clock.advance(1_000);
    expect(bucket.tryTake().ok).toBe(true);
  });

  it('an already aborted signal is refused with its reason, leaving nothing', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 1, burst: 1, clock });
    const reason = new Error('before');
    await expect(bucket.take({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(bucket.available).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('granted tokens stay granted: an abort after the grant changes nothing', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 10, burst: 1, clock });
    bucket.tryTake();
    const c = new AbortController();
    const taking = bucket.take({ signal: c.signal });
    clock.advanceSync(100); // granted synchronously by the timer
    c.abort();
    await expect(taking).resolves.toBeUndefined();
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
  });

  it('n larger than burst, or not a positive integer, rejects at once naming the argument', async () => {
    const bucket = tokenBucket({ ratePerSec: 1, burst: 3, clock: createVirtualClock() });
    await expect(bucket.take({ n: 4 })).rejects.toThrow(
      /at most burst \(3\); this take could never/,
    );
    for (const n of [0, -1, 1.5, Number.NaN]) {
      await expect(bucket.take({ n })).rejects.toBeInstanceOf(SpillwayArgumentError);
    }
    await expect(bucket.take({ maxWaitMs: -1 })).rejects.toThrow(/`maxWaitMs`.*got -1/);
    await expect(bucket.take({ deadline: 'soon' as never })).rejects.toThrow(/`deadline`/);
    await expect(bucket.take({ signal: {} as never })).rejects.toThrow(/`signal`/);
    await expect(bucket.take(null as never)).rejects.toThrow(/`options`/);
    expect(bucket.waiting).toBe(0);
  });

  it('bad maxWaiting fails at construction, naming the option and the value', () => {
    const cases: [unknown, string][] = [
      [-1, '-1 (number)'],
      [1.5, '1.5 (number)'],
      [Number.NaN, 'NaN (number)'],
      ['3', '"3" (string)'],
    ];
    for (const [bad, shown] of cases) {
      expect(() => tokenBucket({ ratePerSec: 1, burst: 1, maxWaiting: bad as number })).toThrow(
        `Expected \`maxWaiting\` to be an integer of 0 or more, got ${shown}`,
      );
    }
  });

  it('reports a take refused for its wait to onThrottle listeners', async () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 10, burst: 1, clock });
    const seen: number[] = [];
    bucket.onThrottle((e) => seen.push(e.retryAfterMs));
    bucket.tryTake();
    await expect(bucket.take({ maxWaitMs: 10 })).rejects.toBeInstanceOf(RateLimitedError);
    expect(seen).toEqual([100]);
  });
});
