import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { criticalities, type Criticality } from '../criticality/criticality.js';
import { concurrencyLimit, type AcquireResult } from './concurrency-limit.js';
import type { Permit } from './permit.js';

function permitOf(r: AcquireResult): Permit {
  if (!r.ok) throw new Error(`expected a permit, got ${r.reason}`);
  return r.permit;
}

const shares = { critical: 0.9, sheddable: 0.1 } as const;

describe('concurrencyLimit partitions', () => {
  it('lends an idle share out: either criticality alone may use every slot', async () => {
    for (const criticality of ['critical', 'sheddable'] as const) {
      const limiter = concurrencyLimit({
        limit: 10,
        partitions: shares,
        clock: createVirtualClock(),
      });
      for (let i = 0; i < 10; i++) permitOf(await limiter.acquire({ criticality }));
      expect((await limiter.acquire({ criticality })).ok).toBe(false);
      expect(limiter.active).toBe(10);
    }
  });

  it('still admits a criticality within its share when others have burst into it', async () => {
    const limiter = concurrencyLimit({
      limit: 10,
      partitions: shares,
      clock: createVirtualClock(),
    });
    const sheddable = [];
    for (let i = 0; i < 10; i++)
      sheddable.push(permitOf(await limiter.acquire({ criticality: 'sheddable' })));
    // The limit is full, but critical work is owed ⌈10 × 0.9⌉ = 9 slots.
    for (let i = 0; i < 9; i++) permitOf(await limiter.acquire({ criticality: 'critical' }));
    expect(limiter.active).toBe(19); // the documented overshoot: at most the late shares
    expect(await limiter.acquire({ criticality: 'critical' })).toMatchObject({ ok: false });
    expect(limiter.tryAcquire().ok).toBe(false); // tryAcquire is critical work too
    // Sheddable work over its share gets nothing until it is back within it.
    for (const p of sheddable.slice(1)) p.release();
    expect(limiter.active).toBe(10);
    expect((await limiter.acquire({ criticality: 'sheddable' })).ok).toBe(false);
    sheddable[0]!.release();
    expect((await limiter.acquire({ criticality: 'sheddable' })).ok).toBe(true);
  });

  it('a criticality not named has no guarantee: it only gets spare slots', async () => {
    const limiter = concurrencyLimit({ limit: 2, partitions: shares, clock: createVirtualClock() });
    permitOf(await limiter.acquire({ criticality: 'sheddable-plus' }));
    permitOf(await limiter.acquire({ criticality: 'sheddable-plus' }));
    expect((await limiter.acquire({ criticality: 'sheddable-plus' })).ok).toBe(false);
    expect((await limiter.acquire({ criticality: 'critical' })).ok).toBe(true);
  });

  it('a waiter whose criticality falls back within its share is served though the limit is full', async () => {
    const limiter = concurrencyLimit({
      limit: 10,
      maxQueue: 5,
      partitions: shares,
      clock: createVirtualClock(),
    });
    for (let i = 0; i < 10; i++) permitOf(await limiter.acquire({ criticality: 'sheddable' }));
    const critical = [];
    for (let i = 0; i < 9; i++)
      critical.push(permitOf(await limiter.acquire({ criticality: 'critical' })));
    const waiter = limiter.acquire({ criticality: 'critical' });
    expect(limiter.queued).toBe(1);
    critical[0]!.release(); // 18 held, 8 of them critical: the waiter is owed a slot again
    expect(limiter.queued).toBe(0);
    expect((await waiter).ok).toBe(true);
  });

  it.each([
    ['a sheddable flood', 0.4, 0.1],
    ['a critical flood', 0.0537, 1.013],
  ])(
    'under sustained contention (%s) each criticality holds at least its share',
    async (_, criticalEveryMs, sheddableEveryMs) => {
      const run = async (partitioned: boolean) => {
        const clock = createVirtualClock();
        const limiter = concurrencyLimit({
          limit: 20,
          partitions: partitioned ? shares : undefined,
          clock,
        });
        const held = { critical: 0, sheddable: 0 };
        const sum = { critical: 0, sheddable: 0 };
        // Capacity: 20 slots × 10 ms = 2 per ms; each criticality alone offers more than that.
        const arrive = (criticality: 'critical' | 'sheddable', everyMs: number): void => {
          void limiter.acquire({ criticality }).then((r) => {
            if (!r.ok) return;
            held[criticality]++;
            clock.setTimer(10, () => {
              held[criticality]--;
              r.permit.release();
            });
          });
          clock.setTimer(everyMs, () => arrive(criticality, everyMs));
        };
        arrive('critical', criticalEveryMs);
        arrive('sheddable', sheddableEveryMs);
        for (let t = 0; t < 200; t++) {
          await clock.advance(5);
          sum.critical += held.critical / 200;
          sum.sheddable += held.sheddable / 200;
        }
        return sum;
      };
      const fair = await run(true);
      expect(fair.critical).toBeGreaterThanOrEqual(0.9 * 20 - 1);
      expect(fair.sheddable).toBeGreaterThanOrEqual(0.1 * 20 - 1);
      // Without partitions, slots follow arrival rates: the flood takes the other's share.
      const unfair = await run(false);
      expect(Math.min(unfair.critical / 18, unfair.sheddable / 2)).toBeLessThan(0.75);
    },
  );

  it('validates the shares, naming the option', () => {
    const clock = createVirtualClock();
    expect(() => concurrencyLimit({ limit: 1, clock, partitions: 0.5 as never })).toThrow(
      /`partitions`/,
    );
    expect(() =>
      concurrencyLimit({ limit: 1, clock, partitions: { urgent: 0.5 } as never }),
    ).toThrow(/`partitions` to be keys among critical-plus/);
    expect(() => concurrencyLimit({ limit: 1, clock, partitions: { critical: 1.5 } })).toThrow(
      /`partitions.critical`/,
    );
    expect(() =>
      concurrencyLimit({ limit: 1, clock, partitions: { critical: 0.7, sheddable: 0.4 } }),
    ).toThrow(/shares summing to at most 1/);
  });

  it('property: work within its share is never refused, and the overshoot stays bounded', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('acquire' as const), rank: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
    );
    // Four shares summing to at most 1 (some of them 0: no guarantee).
    const shareArb = fc
      .array(fc.integer({ min: 0, max: 10 }), { minLength: 4, maxLength: 4 })
      .map((parts) => {
        const total = Math.max(
          10,
          parts.reduce((a, b) => a + b, 0),
        );
        return Object.fromEntries(parts.map((p, r) => [criticalities[r], p / total])) as Record<
          Criticality,
          number
        >;
      });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        shareArb,
        fc.array(op, { maxLength: 150 }),
        async (limit, partitions, ops) => {
          const limiter = concurrencyLimit({ limit, partitions, clock: createVirtualClock() });
          const held: { rank: number; permit: Permit }[] = [];
          const owed = criticalities.map((c) => Math.ceil(limit * partitions[c]));
          const bound = limit + owed.reduce((a, b) => a + b, 0);
          for (const o of ops) {
            if (o.kind === 'acquire') {
              const mine = held.filter((h) => h.rank === o.rank).length;
              const r = await limiter.acquire({ criticality: criticalities[o.rank] });
              if (mine < owed[o.rank]! || held.length < limit) expect(r.ok).toBe(true);
              if (r.ok) held.push({ rank: o.rank, permit: r.permit });
            } else if (held.length > 0) {
              held.splice(o.pick % held.length, 1)[0]!.permit.release();
            }
            expect(limiter.active).toBe(held.length);
            expect(limiter.active).toBeLessThanOrEqual(bound);
          }
          for (const h of held) h.permit.release();
          expect(limiter.active).toBe(0);
        },
      ),
    );
  });
});
