// dependency({ ratePerSec, burst }): attempts paced to a rate (a third-party API's published
// one), on a virtual clock. A token before a slot; waits bounded by maxQueueWaitMs and the
// deadline, refused at once when they would outlast them; retries paced too.
import { describe, expect, it } from 'vitest';
import { DeadlineExceededError, RateLimitedError } from '../index.js';
import { createVirtualClock } from '../testing/index.js';
import { dependency, type FetchLike } from './dependency.js';

/** A fetch answering `status`, noting when each request left (on `clock`). */
function recording(clock: { now(): number }, sent: number[], status = 200): FetchLike {
  return () => {
    sent.push(clock.now());
    return Promise.resolve(new Response('x', { status }));
  };
}

describe('dependency({ ratePerSec })', () => {
  it('sends attempts no faster than the rate, in the order they were made', async () => {
    const clock = createVirtualClock();
    const sent: number[] = [];
    const dep = dependency({
      name: 'api',
      clock,
      ratePerSec: 10,
      burst: 2,
      fetch: recording(clock, sent),
    });
    const calls = Array.from({ length: 6 }, () => dep.fetch('http://api/'));
    await clock.advance(0);
    // The burst goes at once; the rest wait in line without holding a slot of the cap.
    expect(sent).toEqual([0, 0]);
    expect(dep.pace!.waiting).toBe(4);
    expect(dep.active).toBe(0);
    await clock.advance(400);
    await Promise.all(calls);
    expect(sent).toEqual([0, 0, 100, 200, 300, 400]);
  });

  it('refuses at once a wait longer than maxQueueWaitMs, sending nothing and blaming no one', async () => {
    const clock = createVirtualClock();
    const sent: number[] = [];
    const dep = dependency({
      name: 'api',
      clock,
      ratePerSec: 1,
      maxQueueWaitMs: 500,
      fetch: recording(clock, sent),
    });
    await dep.fetch('http://api/');
    const refused = await dep.fetch('http://api/').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterMs).toBe(1_000);
    expect(clock.now()).toBe(0); // not after waiting
    expect(sent).toEqual([0]);
    // A local refusal: the breaker and the budget never hear of it.
    expect(dep.breaker!.toJSON().window).toMatchObject({ failures: 0 });
    expect(dep.budget.available).toBeGreaterThan(0);
  });

  it('refuses at once a wait the deadline cannot cover', async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'api', clock, ratePerSec: 2, fetch: recording(clock, []) });
    await dep.fetch('http://api/');
    const refused = await dep
      .fetch('http://api/', undefined, { deadline: 100 })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DeadlineExceededError);
    expect(clock.now()).toBe(0);
  });

  it('lets an aborted caller leave the line at once, with nothing left behind', async () => {
    const clock = createVirtualClock();
    const sent: number[] = [];
    const dep = dependency({ name: 'api', clock, ratePerSec: 1, fetch: recording(clock, sent) });
    await dep.fetch('http://api/');
    const controller = new AbortController();
    const waiting = dep
      .fetch('http://api/', { signal: controller.signal })
      .catch((e: unknown) => e);
    await clock.advance(0);
    expect(dep.pace!.waiting).toBe(1);
    controller.abort(new Error('gave up'));
    expect(((await waiting) as Error).message).toBe('gave up');
    expect(dep.pace!.waiting).toBe(0);
    expect(dep.active).toBe(0);
    await clock.advance(5_000);
    expect(sent).toEqual([0]); // the aborted call never went
    expect(clock.pendingTimers).toBe(0);
  });

  it('paces retries too', async () => {
    const clock = createVirtualClock();
    const sent: number[] = [];
    const dep = dependency({
      name: 'api',
      clock,
      ratePerSec: 4,
      breaker: false,
      retry: { maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } },
      fetch: recording(clock, sent, 503),
    });
    const call = dep.fetch('http://api/').catch((e: unknown) => e);
    await clock.advance(1_000);
    await call;
    // Three attempts, each about a token apart: the backoff's jitter (under 1 ms) shifts when a
    // retry asks, and the bucket serves a waiter as of when its token was due, so a gap moves
    // by up to that millisecond either way while the rate over the three holds.
    expect(sent).toHaveLength(3);
    for (const [i, gap] of [sent[1]! - sent[0]!, sent[2]! - sent[1]!].entries()) {
      expect(gap, `gap ${i}`).toBeGreaterThanOrEqual(248.9);
      expect(gap, `gap ${i}`).toBeLessThanOrEqual(251.1);
    }
    expect(sent[2]! - sent[0]!).toBeGreaterThanOrEqual(500);
  });

  it('takes burst only with ratePerSec, and names a bad one', () => {
    expect(() => dependency({ name: 'x', burst: 5 })).toThrow(/`burst`/);
    expect(() => dependency({ name: 'x', ratePerSec: -1 })).toThrow(/`ratePerSec`/);
    expect(() => dependency({ name: 'x', ratePerSec: 10, burst: 0 })).toThrow(/`burst`/);
    expect(dependency({ name: 'x' }).pace).toBeUndefined();
  });
});
