import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SlicedWindow } from './sliced-window.js';

describe('SlicedWindow', () => {
  it('keeps counts for `slices` slices, then drops each slice whole', () => {
    const w = new SlicedWindow({ sliceMs: 100, slices: 3, counters: 2, now: 0 });
    w.add(0, 1, 0);
    w.add(1, 5, 50);
    w.add(0, 2, 150);
    expect(w.sum(0, 150)).toBe(3);
    expect(w.sum(1, 299)).toBe(5);
    expect(w.sum(0, 300)).toBe(2); // slice [0,100) aged out
    expect(w.sum(1, 300)).toBe(0);
    expect(w.sum(0, 400)).toBe(0);
    w.add(0, 7, 10_000); // a jump longer than the window clears it
    expect(w.sum(0, 10_000)).toBe(7);
  });

  it('agrees with a brute-force model for any sequence of adds and time steps, either way of counting', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(
          fc.record({ dt: fc.integer({ min: 0, max: 120 }), n: fc.integer({ min: -3, max: 5 }) }),
          { maxLength: 200 },
        ),
        (slices, sliceMs, steps) => {
          const w = new SlicedWindow({ sliceMs, slices, counters: 1, now: 0 });
          const log: { slice: number; n: number }[] = [];
          let now = 0;
          for (const [i, { dt, n }] of steps.entries()) {
            now += dt;
            // Every other step moves the window first, then counts into its newest slice.
            if (i % 2 === 0) w.add(0, n, now);
            else {
              w.advance(now);
              w.addToLatest(0, n);
            }
            log.push({ slice: Math.floor(now / sliceMs), n });
            const head = Math.floor(now / sliceMs);
            const expected = log
              .filter((e) => e.slice > head - slices)
              .reduce((sum, e) => sum + e.n, 0);
            expect(w.sum(0, now)).toBe(expected);
            expect(w.sumSoFar(0)).toBe(expected);
          }
        },
      ),
    );
  });
});
