import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { criticalities } from '../criticality/criticality.js';
import { concurrencyLimit, type QueueOrder } from './concurrency-limit.js';
import type { Permit } from './permit.js';

type Op =
  | { kind: 'acquire'; criticality: number; withSignal: boolean; deadlineMs: number | undefined }
  | { kind: 'try' }
  | { kind: 'abort'; pick: number }
  | { kind: 'release'; pick: number; twice: boolean }
  | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('acquire' as const),
    criticality: fc.integer({ min: 0, max: 3 }),
    withSignal: fc.boolean(),
    deadlineMs: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('try' as const) }),
  fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), twice: fc.boolean() }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120 }) }),
);

const settings = fc.record({
  limit: fc.integer({ min: 1, max: 4 }),
  maxQueue: fc.integer({ min: 0, max: 5 }),
  maxQueueWaitMs: fc.integer({ min: 1, max: 200 }),
  order: fc.constantFrom<QueueOrder>('fifo', 'lifo', 'adaptive'),
});

describe('concurrencyLimit properties', () => {
  it('for any sequence of acquire / abort / release / advance, the invariants hold and nothing leaks', async () => {
    await fc.assert(
      fc.asyncProperty(settings, fc.array(op, { maxLength: 80 }), async (s, ops) => {
        const clock = createVirtualClock();
        const limit = concurrencyLimit({ ...s, clock, codelTargetMs: 5, codelIntervalMs: 50 });
        const held: Permit[] = [];
        const releases = new Map<Permit, number>();
        const controllers: AbortController[] = [];
        const signals: AbortSignal[] = [];
        const pending = new Set<Promise<void>>();
        let handedOut = 0;

        const track = (permit: Permit): void => {
          handedOut++;
          held.push(permit);
          releases.set(permit, 0);
        };
        const release = (permit: Permit): void => {
          permit.release();
          releases.set(permit, (releases.get(permit) ?? 0) + 1);
        };
        const check = (): void => {
          expect(limit.active).toBeLessThanOrEqual(s.limit);
          expect(limit.queued).toBeLessThanOrEqual(s.maxQueue);
          expect(limit.active).toBe(held.filter((p) => !p.released).length);
        };

        for (const o of ops) {
          switch (o.kind) {
            case 'acquire': {
              const controller = new AbortController();
              if (o.withSignal) {
                controllers.push(controller);
                signals.push(controller.signal);
              }
              const startedAt = clock.now();
              const p = limit
                .acquire({
                  signal: o.withSignal ? controller.signal : undefined,
                  criticality: criticalities[o.criticality],
                  deadline: o.deadlineMs === undefined ? undefined : startedAt + o.deadlineMs,
                })
                .then((r) => {
                  // Nobody waits longer than maxQueueWaitMs (or than their deadline).
                  const waited = clock.now() - startedAt;
                  expect(waited).toBeLessThanOrEqual(
                    Math.min(s.maxQueueWaitMs, o.deadlineMs ?? Infinity),
                  );
                  if (r.ok) track(r.permit);
                  pending.delete(p);
                });
              pending.add(p);
              break;
            }
            case 'try': {
              const r = limit.tryAcquire();
              if (r.ok) track(r.permit);
              break;
            }
            case 'abort': {
              const c = controllers[o.pick % Math.max(1, controllers.length)];
              c?.abort();
              break;
            }
            case 'release': {
              const live = held.filter((p) => !p.released);
              const permit = live[o.pick % Math.max(1, live.length)];
              if (permit !== undefined) {
                release(permit);
                if (o.twice) permit.release(); // idempotent: must not free a second slot
              }
              break;
            }
            case 'advance':
              await clock.advance(o.ms);
              break;
          }
          await clock.flush();
          check();
        }

        // Drain: release whatever is held, let every waiter be served or time out.
        for (
          let round = 0;
          round < 1_000 && (pending.size > 0 || held.some((p) => !p.released));
          round++
        ) {
          for (const p of held) if (!p.released) release(p);
          await clock.advance(10);
          check();
        }
        expect(pending.size).toBe(0);
        expect(limit.active).toBe(0);
        expect(limit.queued).toBe(0);
        expect(clock.pendingTimers).toBe(0);
        for (const signal of signals) expect(getEventListeners(signal, 'abort')).toHaveLength(0);
        expect(releases.size).toBe(handedOut);
        for (const count of releases.values()) expect(count).toBe(1);
      }),
      { numRuns: 150 },
    );
  });
});

describe('the timeout trap', () => {
  /** 500 ms of work that stops as soon as its signal aborts; counts how many run at once. */
  function makeWork(clock: ReturnType<typeof createVirtualClock>) {
    const stats = { running: 0, peak: 0, stoppedLate: 0 };
    const work = async (
      signal: AbortSignal | undefined,
      callerGivesUpAt: number,
    ): Promise<void> => {
      stats.running++;
      stats.peak = Math.max(stats.peak, stats.running);
      try {
        await clock.sleep(500, signal);
      } catch {
        // aborted: the work stops here
      } finally {
        stats.running--;
        if (clock.now() > callerGivesUpAt) stats.stoppedLate++;
      }
    };
    return { stats, work };
  }

  it('40 tasks × 500 ms under a limit of 4 with 100 ms deadlines: never more than 4 run, none outlives its caller', async () => {
    const { deadline } = await import('../deadline/deadline.js');
    const clock = createVirtualClock();
    const { stats, work } = makeWork(clock);
    const limit = concurrencyLimit({ limit: 4, maxQueue: 40, maxQueueWaitMs: 60_000, clock });
    const tasks = Array.from({ length: 40 }, () =>
      limit.run(async () => {
        const d = deadline({ timeoutMs: 100, clock });
        try {
          await work(d.signal, d.expiresAt);
        } finally {
          d.dispose();
        }
      }),
    );
    await clock.runAll();
    await Promise.all(tasks);
    expect(stats.peak).toBe(4);
    expect(stats.stoppedLate).toBe(0);
    expect(clock.now()).toBe(1_000); // 10 rounds of 4, each cut off at 100 ms

    // The same load with a race-based timeout (the slot is freed when the race ends, the work
    // is never told to stop): slots recycle every 100 ms while the work runs on for 500 ms.
    const raceClock = createVirtualClock();
    const raced = makeWork(raceClock);
    let free = 4;
    const waiters: (() => void)[] = [];
    const withSlot = async (fn: () => Promise<void>): Promise<void> => {
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiters.push(resolve));
      try {
        await fn();
      } finally {
        const next = waiters.shift();
        if (next) next();
        else free++;
      }
    };
    const raceTasks = Array.from({ length: 40 }, () =>
      withSlot(() => {
        const startedAt = raceClock.now();
        const running = raced.work(undefined, startedAt + 100);
        return Promise.race([running, raceClock.sleep(100)]);
      }),
    );
    await raceClock.runAll();
    await Promise.all(raceTasks);
    console.log(
      `timeout trap: spillway peak ${stats.peak} running, 0 outlived their caller; ` +
        `race-based timeout peak ${raced.stats.peak} running, ${raced.stats.stoppedLate} of 40 outlived their caller`,
    );
    expect(raced.stats.peak).toBeGreaterThanOrEqual(16);
    expect(raced.stats.stoppedLate).toBe(40);
  });
});
