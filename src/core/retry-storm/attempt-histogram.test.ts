import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpillwayConfigError } from '../errors/config-error.js';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { attemptHistogram } from './attempt-histogram.js';

describe('attemptHistogram', () => {
  it('counts attempts 1 … buckets − 1 apart and the rest together, in memory that never grows', () => {
    const clock = createVirtualClock();
    const h = attemptHistogram({ buckets: 4, clock });
    for (const a of [1, 2, 3, 4, 5, 100]) h.record(a);
    expect(h.counts()).toEqual([1, 1, 1, 3]);
    for (let a = 1; a <= 10_000; a++) h.record(a);
    expect(h.counts()).toHaveLength(4);
    expect(h.arrivals()).toBe(10_006);
    expect(h.retries()).toBe(10_004);
  });

  it('counts anything below 2, or not a number, as a first try', () => {
    const h = attemptHistogram({ clock: createVirtualClock() });
    for (const a of [0, -3, Number.NaN, 1.9]) h.record(a);
    expect(h.counts()).toEqual([4, 0, 0, 0]);
    expect(h.retryShare).toBe(0);
  });

  it('halves every half-life, and forgets altogether after some forty', () => {
    const clock = createVirtualClock();
    const h = attemptHistogram({ halfLifeMs: 1_000, clock });
    for (let i = 0; i < 6; i++) h.record(1);
    for (let i = 0; i < 2; i++) h.record(2);
    clock.advanceSync(1_000);
    expect(h.arrivals()).toBeCloseTo(4, 9);
    expect(h.counts()[0]).toBeCloseTo(3, 9);
    clock.advanceSync(2_000);
    expect(h.arrivals()).toBeCloseTo(1, 9);
    // Decay scales every bucket alike: the share is what it was.
    expect(h.retryShare).toBeCloseTo(0.25, 12);
    clock.advanceSync(45_000);
    expect(h.arrivals()).toBe(0);
    expect(h.counts()).toEqual([0, 0, 0, 0]);
    expect(h.retryShare).toBe(0);
  });

  it('decays in steps of a sixteenth of a half-life: off by at most 2^(1/16) in between', () => {
    const clock = createVirtualClock();
    const h = attemptHistogram({ halfLifeMs: 1_600, clock });
    h.record(1);
    clock.advanceSync(99);
    // Under a step: not decayed yet, and no more than 2^(1/16) above the exact weight.
    expect(h.arrivals()).toBe(1);
    expect(1 / 2 ** (-99 / 1_600)).toBeLessThan(2 ** (1 / 16));
    clock.advanceSync(1);
    expect(h.arrivals()).toBeCloseTo(2 ** (-100 / 1_600), 12);
  });

  it('weighs a recent arrival more than an old one', () => {
    const clock = createVirtualClock();
    const h = attemptHistogram({ halfLifeMs: 1_000, clock });
    for (let i = 0; i < 10; i++) h.record(1);
    clock.advanceSync(3_000);
    for (let i = 0; i < 10; i++) h.record(3);
    // 10 first tries three half-lives ago weigh 1.25 against 10 retries now.
    expect(h.retryShare).toBeCloseTo(10 / 11.25, 9);
  });

  it('refuses bad options at construction, naming the option and the value', () => {
    for (const [options, option] of [
      [{ buckets: 1 }, 'buckets'],
      [{ buckets: 2.5 }, 'buckets'],
      [{ buckets: 101 }, 'buckets'],
      [{ halfLifeMs: 0 }, 'halfLifeMs'],
      [{ halfLifeMs: Number.NaN }, 'halfLifeMs'],
      [{ clock: {} }, 'clock'],
    ] as const) {
      expect(() => attemptHistogram(options as never), option).toThrow(SpillwayConfigError);
      try {
        attemptHistogram(options as never);
      } catch (error) {
        expect((error as SpillwayConfigError).option).toBe(option);
      }
    }
  });

  it('keeps its invariants over any arrivals and pauses', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -2, max: 120 }), fc.integer({ min: 0, max: 5_000 })), {
          maxLength: 300,
        }),
        (steps) => {
          const clock = createVirtualClock();
          const h = attemptHistogram({ buckets: 5, halfLifeMs: 500, clock });
          let recorded = 0;
          for (const [attempt, pauseMs] of steps) {
            clock.advanceSync(pauseMs);
            h.record(attempt);
            recorded++;
            const counts = h.counts();
            const arrivals = h.arrivals();
            expect(counts).toHaveLength(5);
            expect(arrivals).toBeLessThanOrEqual(recorded + 1e-9);
            expect(h.retries()).toBeLessThanOrEqual(arrivals + 1e-9);
            expect(counts.reduce((a, b) => a + b, 0)).toBeCloseTo(arrivals, 6);
            expect(h.retryShare).toBeGreaterThanOrEqual(0);
            expect(h.retryShare).toBeLessThanOrEqual(1 + 1e-12);
          }
        },
      ),
    );
  });
});
