import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { concurrencyLimit, type ConcurrencyLimit } from './concurrency-limit.js';
import { freeSlot } from './free-slot.js';

describe('freeSlot', () => {
  it('takes a free slot as tryAcquire does, and reports no refusal when there is none', () => {
    const limit = concurrencyLimit({ limit: 2, clock: createVirtualClock() });
    const refusals: string[] = [];
    limit.onReject((e) => refusals.push(e.reason));
    const a = freeSlot(limit);
    const b = freeSlot(limit);
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(limit.active).toBe(2);
    expect(freeSlot(limit)).toBeUndefined();
    expect(refusals).toEqual([]);
    // tryAcquire on the same full limit is a refusal, and says so.
    expect(limit.tryAcquire().ok).toBe(false);
    expect(refusals).toEqual(['queue-full']);
    a!.release();
    expect(freeSlot(limit)).toBeDefined();
    expect(limit.active).toBe(2);
  });

  it('never jumps the line: a slot freed goes to the waiter, not to a look', async () => {
    const limit = concurrencyLimit({ limit: 1, maxQueue: 1, clock: createVirtualClock() });
    const held = freeSlot(limit)!;
    const waiting = limit.acquire();
    held.release();
    expect(freeSlot(limit)).toBeUndefined();
    expect((await waiting).ok).toBe(true);
  });

  it('gives critical work its share of a partitioned limit, as tryAcquire does', async () => {
    const limit = concurrencyLimit({
      limit: 2,
      partitions: { critical: 0.5, sheddable: 0.5 },
      clock: createVirtualClock(),
    });
    for (let i = 0; i < 2; i++)
      expect((await limit.acquire({ criticality: 'sheddable' })).ok).toBe(true);
    // Full, but critical work is owed ⌈2 × 0.5⌉ = 1 slot.
    expect(freeSlot(limit)).toBeDefined();
    expect(freeSlot(limit)).toBeUndefined();
    expect(limit.active).toBe(3);
  });

  it('asks a limit of another implementation with its own tryAcquire', () => {
    const real = concurrencyLimit({ limit: 1, clock: createVirtualClock() });
    let asked = 0;
    const other: ConcurrencyLimit = {
      tryAcquire: () => {
        asked++;
        return real.tryAcquire();
      },
      hasRoom: (c) => real.hasRoom(c),
      acquire: (o) => real.acquire(o),
      run: (fn, o) => real.run(fn, o),
      get active() {
        return real.active;
      },
      get queued() {
        return real.queued;
      },
      get limit() {
        return real.limit;
      },
      onAcquire: real.onAcquire,
      onReject: real.onReject,
      onRelease: real.onRelease,
    };
    expect(freeSlot(other)).toBeDefined();
    expect(freeSlot(other)).toBeUndefined();
    expect(asked).toBe(2);
  });
});
