// How concurrencyLimit feeds a limit that learns (`limit.onSample`): one sample per released
// permit, measured on the limiter's clock, and nothing at all on the fixed-limit path.
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { DeadlineExceededError } from '../errors/rejected-error.js';
import { DependencyOverloadedError } from '../errors/overloaded-error.js';
import { concurrencyLimit, type AcquireResult } from './concurrency-limit.js';
import type { LimitSample } from './limit-source.js';
import type { Permit } from './permit.js';

function permitOf(r: AcquireResult): Permit {
  if (!r.ok) throw new Error(`expected a permit, got ${r.reason}`);
  return r.permit;
}

/** A limit that records what it is fed. */
function recordingLimit(current = 2): { current: number; samples: LimitSample[] } & {
  onSample(s: LimitSample): void;
} {
  const samples: LimitSample[] = [];
  return {
    current,
    samples,
    onSample(s) {
      samples.push(s);
    },
  };
}

describe('concurrencyLimit feeding an adaptive limit', () => {
  it('reports each permit once: hold time, in flight at grant, and the outcome', async () => {
    const clock = createVirtualClock();
    const source = recordingLimit(3);
    const limiter = concurrencyLimit({ limit: source, clock });
    const a = permitOf(limiter.tryAcquire());
    await clock.advance(5);
    const b = permitOf(limiter.tryAcquire());
    const c = permitOf(limiter.tryAcquire());
    await clock.advance(10);
    a.release();
    a.release(); // idempotent: still one sample
    b.release('dropped');
    c.release('ignored'); // failed before measuring anything: no sample
    {
      using d = permitOf(limiter.tryAcquire());
      await clock.advance(2);
      expect(d.released).toBe(false);
    }
    expect(source.samples).toEqual([
      { rttMs: 15, inflight: 1, dropped: false },
      { rttMs: 10, inflight: 2, dropped: true },
      { rttMs: 2, inflight: 1, dropped: false },
    ]);
  });

  it('measures a waiter from the moment it gets its slot, not from when it joined the line', async () => {
    const clock = createVirtualClock();
    const source = recordingLimit(1);
    const limiter = concurrencyLimit({ limit: source, maxQueue: 1, clock });
    const held = permitOf(limiter.tryAcquire());
    const waiting = limiter.acquire();
    await clock.advance(50);
    held.release();
    const next = permitOf(await waiting);
    await clock.advance(7);
    next.release();
    expect(source.samples.map((s) => s.rttMs)).toEqual([50, 7]);
  });

  it('applies what a sample teaches before handing the freed slot to the line', async () => {
    const clock = createVirtualClock();
    const source = {
      current: 2,
      onSample(s: LimitSample) {
        if (s.dropped) this.current = 1;
      },
    };
    const limiter = concurrencyLimit({ limit: source, maxQueue: 1, clock });
    const a = permitOf(limiter.tryAcquire());
    permitOf(limiter.tryAcquire());
    let granted = false;
    void limiter.acquire().then((r) => (granted = r.ok));
    a.release('dropped'); // limit falls to 1 with 1 still held: the waiter keeps waiting
    await clock.flush();
    expect(granted).toBe(false);
    expect(limiter.active).toBe(1);
    expect(limiter.queued).toBe(1);
  });

  it('run() releases ok on success, dropped on overload, timeout or abort, ignored otherwise', async () => {
    const clock = createVirtualClock();
    const source = recordingLimit(5);
    const limiter = concurrencyLimit({ limit: source, clock });
    await limiter.run(() => 'fine');
    await expect(limiter.run(() => Promise.reject(new Error('bug')))).rejects.toThrow('bug');
    await expect(
      limiter.run(() => {
        throw new DependencyOverloadedError('busy', { signal: 'later' });
      }),
    ).rejects.toBeInstanceOf(DependencyOverloadedError);
    await expect(
      limiter.run(() => Promise.reject(new DeadlineExceededError())),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
    await expect(
      limiter.run(() => Promise.reject(new DOMException('slow', 'TimeoutError'))),
    ).rejects.toThrow('slow');
    const controller = new AbortController();
    const aborted = limiter.run(
      ({ signal }) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }),
        ),
      { signal: controller.signal },
    );
    controller.abort();
    await expect(aborted).rejects.toThrow('stopped');
    expect(source.samples.map((s) => s.dropped)).toEqual([false, true, true, true, true]);
    expect(limiter.active).toBe(0);
  });

  it('a limit whose onSample throws never breaks the release that fed it', async () => {
    const clock = createVirtualClock();
    const errors: unknown[] = [];
    const original = globalThis.queueMicrotask;
    const spy = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((fn) =>
      original(() => {
        try {
          fn();
        } catch (e) {
          errors.push(e);
        }
      }),
    );
    const limiter = concurrencyLimit({
      limit: {
        current: 1,
        onSample() {
          throw new Error('bad limit');
        },
      },
      maxQueue: 1,
      clock,
    });
    const held = permitOf(limiter.tryAcquire());
    const waiting = limiter.acquire();
    held.release();
    await Promise.resolve();
    spy.mockRestore();
    expect((await waiting).ok).toBe(true);
    expect(errors).toHaveLength(1);
  });

  it('an unknown outcome frees the slot first, then throws', () => {
    const limiter = concurrencyLimit({ limit: 1, clock: createVirtualClock() });
    const p = permitOf(limiter.tryAcquire());
    expect(() => p.release('failed' as never)).toThrow(/`outcome`/);
    expect(limiter.active).toBe(0);
    expect(p.released).toBe(true);
  });

  it('with a fixed limit (or a source without onSample) it never reads the clock per permit', async () => {
    const clock = createVirtualClock();
    const now = vi.spyOn(clock, 'now');
    for (const limit of [4, { current: 4 }]) {
      const limiter = concurrencyLimit({ limit, clock });
      for (let i = 0; i < 100; i++) permitOf(limiter.tryAcquire()).release('dropped');
      for (let i = 0; i < 100; i++) permitOf(await limiter.acquire()).release();
      await limiter.run(() => 1);
    }
    expect(now).not.toHaveBeenCalled();
  });

  it('reports the outcome on release events', () => {
    const limiter = concurrencyLimit({ limit: 2, clock: createVirtualClock() });
    const outcomes: string[] = [];
    limiter.onRelease((e) => outcomes.push(e.outcome));
    permitOf(limiter.tryAcquire()).release();
    permitOf(limiter.tryAcquire()).release('dropped');
    expect(outcomes).toEqual(['ok', 'dropped']);
  });

  it('property: one sample per non-ignored release, whatever the sequence, with a moving limit', async () => {
    const outcome = fc.constantFrom(
      undefined,
      'ok' as const,
      'dropped' as const,
      'ignored' as const,
    );
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('acquire' as const),
        criticality: fc.integer({ min: 0, max: 3 }),
      }),
      fc.record({
        kind: fc.constant('release' as const),
        pick: fc.nat(),
        outcome,
        twice: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 50 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 120 }), fc.boolean(), async (ops, partitioned) => {
        const clock = createVirtualClock();
        const samples: LimitSample[] = [];
        // A limit that moves with what it learns: down on a drop, up otherwise.
        const source = {
          current: 3,
          onSample(s: LimitSample) {
            samples.push(s);
            this.current = Math.max(1, Math.min(6, this.current + (s.dropped ? -1 : 1)));
          },
        };
        const limiter = concurrencyLimit({
          limit: source,
          maxQueue: 3,
          maxQueueWaitMs: 30,
          partitions: partitioned ? { critical: 0.5, sheddable: 0.25 } : undefined,
          clock,
        });
        const held: { permit: Permit; at: number }[] = [];
        let expected = 0;
        const criticalities = ['critical-plus', 'critical', 'sheddable-plus', 'sheddable'] as const;
        for (const o of ops) {
          if (o.kind === 'acquire') {
            void limiter.acquire({ criticality: criticalities[o.criticality] }).then((r) => {
              if (r.ok) held.push({ permit: r.permit, at: clock.now() });
            });
            await clock.flush();
          } else if (o.kind === 'release' && held.length > 0) {
            const { permit, at } = held.splice(o.pick % held.length, 1)[0]!;
            const before = samples.length;
            permit.release(o.outcome);
            if (o.twice) permit.release('dropped');
            if (o.outcome !== 'ignored') {
              expected++;
              expect(samples.length).toBe(before + 1);
              expect(samples.at(-1)!.rttMs).toBe(clock.now() - at);
              expect(samples.at(-1)!.dropped).toBe(o.outcome === 'dropped');
            } else expect(samples.length).toBe(before);
            await clock.flush();
          } else if (o.kind === 'advance') await clock.advance(o.ms);
          expect(limiter.active).toBe(held.length);
        }
        expect(samples).toHaveLength(expected);
        for (const s of samples) expect(s.inflight).toBeGreaterThanOrEqual(1);
        for (const h of held) h.permit.release('ignored');
        await clock.runAll();
        for (const h of held.splice(0)) h.permit.release('ignored');
        expect(limiter.active).toBe(0);
        expect(limiter.queued).toBe(0);
      }),
      { numRuns: 150 },
    );
  });
});
