import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import {
  DeadlineExceededError,
  QueueFullError,
  QueueTimeoutError,
} from '../errors/rejected-error.js';
import {
  concurrencyLimit,
  ownedConcurrencyLimit,
  type AcquireResult,
} from './concurrency-limit.js';
import type { Permit } from './permit.js';

function permitOf(r: AcquireResult): Permit {
  if (!r.ok) throw new Error(`expected a permit, got ${r.reason}`);
  return r.permit;
}

describe('concurrencyLimit', () => {
  it('admits up to the limit, refuses beyond it, and release is idempotent', () => {
    const limit = concurrencyLimit({ limit: 2, clock: createVirtualClock() });
    const a = permitOf(limit.tryAcquire());
    permitOf(limit.tryAcquire());
    expect(limit.tryAcquire()).toEqual({ ok: false, reason: 'queue-full' });
    expect(limit.active).toBe(2);
    a.release();
    a.release();
    expect(a.released).toBe(true);
    expect(limit.active).toBe(1);
    {
      using p = permitOf(limit.tryAcquire());
      expect(p.released).toBe(false);
      expect(limit.active).toBe(2);
    }
    expect(limit.active).toBe(1);
  });

  it('passes a released slot straight to the oldest waiter: nobody jumps the line', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 3, clock });
    const first = permitOf(limit.tryAcquire());
    const order: string[] = [];
    const b = limit.acquire().then((r) => (order.push('b'), r));
    const c = limit.acquire().then((r) => (order.push('c'), r));
    expect(limit.queued).toBe(2);
    first.release();
    expect(limit.active).toBe(1); // already handed to b, before b's callback runs
    expect(limit.tryAcquire()).toMatchObject({ ok: false, reason: 'queue-full' });
    permitOf(await b).release();
    permitOf(await c).release();
    expect(order).toEqual(['b', 'c']);
    expect(limit.active).toBe(0);
  });

  it('lifo serves the newest waiter first', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 3, order: 'lifo', clock });
    const first = permitOf(limit.tryAcquire());
    const order: string[] = [];
    const waits = ['b', 'c', 'd'].map((name) =>
      limit.acquire().then((r) => (order.push(name), permitOf(r))),
    );
    first.release();
    (await waits[2]!).release();
    (await waits[1]!).release();
    (await waits[0]!).release();
    expect(order).toEqual(['d', 'c', 'b']);
  });

  it('an aborted waiter leaves the line at once, with its listener and timer removed', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 5, maxQueueWaitMs: 1_000, clock });
    permitOf(limit.tryAcquire());
    const controller = new AbortController();
    const waiting = limit.acquire({ signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    expect(clock.pendingTimers).toBe(1);
    controller.abort();
    expect(limit.queued).toBe(0);
    expect(await waiting).toEqual({ ok: false, reason: 'aborted' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers).toBe(0);
    expect(await limit.acquire({ signal: controller.signal })).toEqual({
      ok: false,
      reason: 'aborted',
    });
  });

  it('a waiter leaves after maxQueueWaitMs with queue-timeout, and its listener is removed', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 5, maxQueueWaitMs: 50, clock });
    permitOf(limit.tryAcquire());
    const signal = new AbortController().signal;
    const waiting = limit.acquire({ signal });
    await clock.advance(49);
    expect(limit.queued).toBe(1);
    await clock.advance(1);
    expect(await waiting).toEqual({ ok: false, reason: 'queue-timeout' });
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('refuses a spent deadline at once, and times a shorter deadline out as deadline', async () => {
    const clock = createVirtualClock({ start: 1_000 });
    const limit = concurrencyLimit({ limit: 1, maxQueue: 5, maxQueueWaitMs: 500, clock });
    expect(await limit.acquire({ deadline: 1_000 })).toEqual({ ok: false, reason: 'deadline' });
    const held = permitOf(limit.tryAcquire());
    const waiting = limit.acquire({ deadline: { expiresAt: 1_100 } });
    await clock.advance(100);
    expect(await waiting).toEqual({ ok: false, reason: 'deadline' });
    held.release();
  });

  it('refuses at the door a waiter whose deadline is shorter than the measured wait', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 10, maxQueueWaitMs: 10_000, clock });
    // Serve a standing line at one grant per 30 ms so the limiter measures its drain rate.
    let held = permitOf(limit.tryAcquire());
    const line = [limit.acquire(), limit.acquire(), limit.acquire()];
    for (const next of line) {
      await clock.advance(30);
      held.release();
      held = permitOf(await next);
    }
    const behind = [limit.acquire(), limit.acquire()]; // two ahead: a newcomer waits ≈ 90 ms
    const tooShort = await limit.acquire({ deadline: clock.now() + 60 });
    expect(tooShort).toEqual({ ok: false, reason: 'deadline' });
    expect(limit.queued).toBe(2);
    const longEnough = limit.acquire({ deadline: clock.now() + 200 });
    expect(limit.queued).toBe(3);
    held.release();
    for (const p of [...behind, longEnough]) {
      const permit = permitOf(await p);
      await clock.advance(30);
      permit.release();
    }
  });

  it('forgets the measured wait once the line is gone: a slow spell does not refuse short deadlines later', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 2, maxQueue: 10, maxQueueWaitMs: 5_000, clock });
    // A slow spell: six callers in a closed loop, each holding a slot for 800 ms.
    const slowCaller = async () => {
      for (let i = 0; i < 4; i++) {
        const permit = permitOf(await limit.acquire());
        await clock.advance(800);
        permit.release();
      }
    };
    const spell = Promise.all(Array.from({ length: 6 }, slowCaller));
    while (limit.active + limit.queued > 0) await clock.advance(100);
    await spell;
    // Now the work takes 5 ms: bursts of four with 300 ms deadlines, at once and after idle.
    const refused: unknown[] = [];
    for (let burst = 0; burst < 10; burst++) {
      if (burst === 5) await clock.advance(10_000);
      const calls = Array.from({ length: 4 }, async () => {
        const r = await limit.acquire({ deadline: clock.now() + 300 });
        if (!r.ok) {
          refused.push(r);
          return;
        }
        await clock.advance(5);
        r.permit.release();
      });
      await Promise.all(calls);
    }
    expect(refused).toEqual([]);
  });

  it('a full line sheds its least critical newest waiter for a more critical arrival', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 2, clock });
    const held = permitOf(limit.tryAcquire());
    const oldSheddable = limit.acquire({ criticality: 'sheddable' });
    const newSheddable = limit.acquire({ criticality: 'sheddable' });
    expect(await limit.acquire({ criticality: 'sheddable' })).toEqual({
      ok: false,
      reason: 'queue-full',
    });
    const critical = limit.acquire({ criticality: 'critical' });
    expect(await newSheddable).toEqual({ ok: false, reason: 'shed' });
    expect(limit.queued).toBe(2);
    // Critical work is served before the sheddable waiter that came earlier.
    held.release();
    const first = permitOf(await critical);
    expect(limit.queued).toBe(1);
    first.release();
    permitOf(await oldSheddable).release();
    expect(() => limit.acquire({ criticality: 'urgent' as never })).toThrow(/`criticality`/);
  });

  it('adaptive order: FIFO without a standing line; LIFO and CoDel drops once one forms', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({
      limit: 1,
      maxQueue: 50,
      maxQueueWaitMs: 10_000,
      order: 'adaptive',
      codelTargetMs: 5,
      codelIntervalMs: 100,
      clock,
    });
    const served: number[] = [];
    const dropped: number[] = [];
    let held = permitOf(limit.tryAcquire());
    let id = 0;
    const join = (): void => {
      const me = id++;
      void limit.acquire().then((r) => {
        if (r.ok) {
          served.push(me);
          held = r.permit;
        } else dropped.push(me);
      });
    };
    // A standing line: 3 waiters always present, each served after ≥ 20 ms, for 300 ms.
    join();
    join();
    join();
    for (let t = 0; t < 15; t++) {
      await clock.advance(20);
      held.release();
      await clock.flush();
      join();
    }
    expect(dropped.length).toBeGreaterThan(0); // stale waiters were dropped as queue-timeout
    const lastServed = served.slice(-3);
    // In LIFO mode the newest waiter is served: ids rise by one each time, skipping the old ones.
    expect(lastServed[2]! - lastServed[1]!).toBe(1);
    held.release();
    await clock.runAll();
  });

  it('hasRoom says, without allocating a wait, whether acquire could get in', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 1, maxQueueWaitMs: 1_000, clock });
    expect(limit.hasRoom()).toBe(true); // a free slot
    const held = permitOf(limit.tryAcquire());
    expect(limit.hasRoom()).toBe(true); // room in the line
    const waiting = limit.acquire({ criticality: 'sheddable' });
    expect(limit.hasRoom('sheddable')).toBe(false); // full, nobody less critical to displace
    expect(limit.hasRoom()).toBe(true); // a critical arrival would displace the sheddable waiter
    expect(concurrencyLimit({ limit: 1, clock }).hasRoom()).toBe(true);
    const noLine = concurrencyLimit({ limit: 1, clock });
    permitOf(noLine.tryAcquire());
    expect(noLine.hasRoom('critical-plus')).toBe(false);
    held.release();
    permitOf(await waiting).release();
  });

  it('follows a moving limit and treats values below 1 as 1', async () => {
    const clock = createVirtualClock();
    const source = { current: 1 };
    const limit = concurrencyLimit({ limit: source, maxQueue: 5, clock });
    const a = permitOf(limit.tryAcquire());
    const b = limit.acquire();
    const c = limit.acquire();
    source.current = 3;
    a.release(); // the release hands out every slot the new limit allows
    permitOf(await b);
    permitOf(await c);
    expect(limit.active).toBe(2);
    source.current = 0;
    expect(limit.limit).toBe(1);
    source.current = Number.NaN;
    expect(limit.limit).toBe(1);
  });

  it('run holds the permit until the work settles and throws typed refusals', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 1, maxQueueWaitMs: 10, clock });
    let seenSignal: AbortSignal | undefined;
    const slow = limit.run(async ({ signal }) => {
      seenSignal = signal;
      await clock.sleep(100);
      return 'done';
    });
    await clock.flush();
    expect(limit.active).toBe(1);
    const waiting = limit.run(() => 'never').catch((error: unknown) => error);
    await expect(limit.run(() => 'never')).rejects.toBeInstanceOf(QueueFullError);
    await clock.advance(10);
    expect(await waiting).toBeInstanceOf(QueueTimeoutError);
    await clock.advance(90);
    await expect(slow).resolves.toBe('done');
    expect(seenSignal?.aborted).toBe(false);
    expect(limit.active).toBe(0);
    await expect(limit.run(() => 1, { deadline: clock.now() })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    await expect(limit.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(limit.active).toBe(0);
  });

  it('reports acquire, reject and release events with wait and hold times', async () => {
    const clock = createVirtualClock();
    const limit = concurrencyLimit({ limit: 1, maxQueue: 1, clock });
    const events: string[] = [];
    limit.onAcquire((e) => events.push(`acquire wait=${e.waitMs}`));
    limit.onReject((e) => events.push(`reject ${e.reason} ${e.criticality}`));
    limit.onRelease((e) => events.push(`release hold=${e.holdMs}`));
    const a = permitOf(limit.tryAcquire());
    const b = limit.acquire();
    limit.tryAcquire();
    await clock.advance(7);
    a.release();
    const pb = permitOf(await b);
    await clock.advance(3);
    pb.release();
    expect(events).toEqual([
      'acquire wait=0',
      'reject queue-full critical',
      'release hold=7',
      'acquire wait=7',
      'release hold=3',
    ]);
  });

  it('an owner may take a free slot without a permit, and only when nothing needs one', async () => {
    const clock = createVirtualClock();
    const limit = ownedConcurrencyLimit({ limit: 2, maxQueue: 1, clock });
    const acquired: number[] = [];
    limit.onAcquire((e) => acquired.push(e.active));
    expect([limit.takeSlot(), limit.takeSlot(), limit.takeSlot()]).toEqual([true, true, false]);
    expect(limit.active).toBe(2);
    expect(acquired).toEqual([1, 2]);
    // A waiter in line is served first: a slot given back goes to it, not to a new taker.
    const waiting = limit.acquire();
    const released: (string | number)[] = [];
    limit.onRelease((e) => released.push(e.outcome, e.holdMs));
    limit.releaseSlot('dropped');
    expect(released).toEqual(['dropped', Number.NaN]); // no hold time was measured for it
    const permit = permitOf(await waiting);
    expect(limit.active).toBe(2);
    expect(limit.takeSlot()).toBe(false);
    // With a release listener, hold times are measured: permits only, even with room.
    permit.release();
    expect(limit.active).toBe(1);
    expect(limit.takeSlot()).toBe(false);
    // Limits that learn from samples, partitions and adaptive order need permits too.
    const source = { current: 4, onSample: () => {} };
    expect(ownedConcurrencyLimit({ limit: source, clock }).takeSlot()).toBe(false);
    expect(ownedConcurrencyLimit({ limit: 4, order: 'adaptive', clock }).takeSlot()).toBe(false);
    const partitioned = ownedConcurrencyLimit({
      limit: 4,
      partitions: { critical: 0.5, sheddable: 0.5 },
      clock,
    });
    expect(partitioned.takeSlot()).toBe(false);
    expect(permitOf(partitioned.tryAcquire()).released).toBe(false);
  });

  it('an owner may wait in line without a signal, and leave it by calling leave()', async () => {
    const clock = createVirtualClock();
    const limit = ownedConcurrencyLimit({ limit: 1, maxQueue: 2, maxQueueWaitMs: 100, clock });
    const reasons: string[] = [];
    limit.onReject((e) => reasons.push(e.reason));
    // A free slot: granted at once, and leaving afterwards changes nothing.
    const first = limit.enter('critical', Infinity);
    first.leave();
    const held = permitOf(await first.result);
    expect(limit.active).toBe(1);
    // A full limit: a place in line with its timer, then leave() takes it out at once.
    const second = limit.enter('critical', Infinity);
    const third = limit.enter('sheddable', 50);
    expect([limit.queued, clock.pendingTimers]).toEqual([2, 2]);
    second.leave();
    expect([limit.queued, clock.pendingTimers]).toEqual([1, 1]);
    expect(await second.result).toEqual({ ok: false, reason: 'aborted' });
    // The deadline given is the wait's: the sheddable one times out as deadline at 50 ms.
    await clock.advance(50);
    expect(await third.result).toEqual({ ok: false, reason: 'deadline' });
    // A waiter granted a slot keeps it: leave() after the grant is a no-op.
    const fourth = limit.enter('critical', Infinity);
    held.release();
    fourth.leave();
    expect(permitOf(await fourth.result).released).toBe(false);
    expect(reasons).toEqual(['aborted', 'deadline']);
    await expect(limit.enter('critical', clock.now()).result).resolves.toEqual({
      ok: false,
      reason: 'deadline',
    });
    expect(() => limit.enter('urgent' as never, Infinity)).toThrow(
      'Expected `criticality` to be one of critical-plus, critical, sheddable-plus, sheddable, got "urgent"',
    );
  });

  it('invalid options fail at construction, naming the option and the value', () => {
    expect(() => concurrencyLimit({ limit: 0 })).toThrow(
      /Expected `limit` to be a positive integer, got 0 \(number\)/,
    );
    expect(() => concurrencyLimit({ limit: 2.5 })).toThrow(/`limit`/);
    expect(() => concurrencyLimit({ limit: {} as never })).toThrow(/`limit`/);
    expect(() => concurrencyLimit({ limit: 1, maxQueue: -1 })).toThrow(/`maxQueue`/);
    expect(() => concurrencyLimit({ limit: 1, maxQueueWaitMs: Infinity })).toThrow(
      /`maxQueueWaitMs`/,
    );
    expect(() => concurrencyLimit({ limit: 1, maxQueueWaitMs: 0 })).toThrow(/`maxQueueWaitMs`/);
    expect(() => concurrencyLimit({ limit: 1, order: 'random' as never })).toThrow(
      /`order` to be one of 'fifo', 'lifo', 'adaptive', got "random"/,
    );
    expect(() => concurrencyLimit({ limit: 1, codelTargetMs: 200 })).toThrow(/`codelTargetMs`/);
  });
});
