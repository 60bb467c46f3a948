import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import type { AdaptiveLimit, LimitBoundsOptions } from './adaptive-limit.js';
import { aimdLimit } from './aimd-limit.js';
import { gradientLimit } from './gradient-limit.js';
import type { WindowOptions } from './sample-window.js';
import { vegasLimit } from './vegas-limit.js';

type Make = (o: LimitBoundsOptions & WindowOptions) => AdaptiveLimit;
const algorithms: [string, Make][] = [
  ['aimdLimit', (o) => aimdLimit(o)],
  ['vegasLimit', (o) => vegasLimit({ ...o, random: () => 0.3 })],
  ['gradientLimit', (o) => gradientLimit(o)],
];

// Any RTT a caller could report, sensible or not.
const rtt = fc.oneof(
  fc.double({ min: 0, max: 10_000, noNaN: true }),
  fc.constantFrom(0, -1, 0.05, Number.NaN, Infinity, 1e12),
);
const step = fc.record({
  rttMs: rtt,
  inflight: fc.integer({ min: 0, max: 2_000 }),
  dropped: fc.boolean(),
  advanceMs: fc.integer({ min: 0, max: 300 }),
});
const bounds = fc
  .tuple(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 300 }))
  .map(([minLimit, span]) => ({ minLimit, maxLimit: minLimit + span }));
const windows = fc.record({
  minWindowMs: fc.constantFrom(0, 10, 100),
  minWindowSamples: fc.constantFrom(1, 3, 10),
});

describe.each(algorithms)('%s properties', (_name, make) => {
  it('never leaves [minLimit, maxLimit], stays a whole number, and reports every change', () => {
    fc.assert(
      fc.property(bounds, windows, fc.array(step, { maxLength: 400 }), (b, w, steps) => {
        const clock = createVirtualClock();
        const limit = make({ ...b, ...w, maxWindowMs: w.minWindowMs, clock });
        let seen = limit.current;
        limit.onChange((e) => {
          expect(e.previous).toBe(seen);
          seen = e.limit;
        });
        for (const s of steps) {
          limit.onSample(s);
          clock.advanceSync(s.advanceMs);
          const c = limit.current;
          expect(Number.isInteger(c)).toBe(true);
          expect(c).toBeGreaterThanOrEqual(b.minLimit);
          expect(c).toBeLessThanOrEqual(b.maxLimit);
          expect(c).toBe(seen);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('ignores RTTs below the floor: no window closes and nothing moves', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 1, maxLength: 200 }),
        (rtts) => {
          const clock = createVirtualClock();
          const limit = make({ rttFloorMs: 1, minWindowSamples: 1, minWindowMs: 0, clock });
          const before = limit.current;
          let changes = 0;
          limit.onChange(() => changes++);
          for (const r of rtts) {
            limit.onSample({ rttMs: r, inflight: 10_000, dropped: false });
            clock.advanceSync(10);
          }
          expect(limit.current).toBe(before);
          expect(changes).toBe(0);
        },
      ),
    );
  });
});
