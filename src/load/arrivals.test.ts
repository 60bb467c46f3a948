import { describe, expect, it } from 'vitest';
import { arrivalSchedule, seededRandom } from './arrivals.js';

function take(next: () => number, n: number): number[] {
  return Array.from({ length: n }, () => next());
}

describe('arrivalSchedule', () => {
  it('constant: evenly spaced from 0, without accumulated rounding error', () => {
    const next = arrivalSchedule({ arrival: 'constant', ratePerSec: 3, seed: 1 });
    const times = take(next, 3001);
    expect(times.slice(0, 4)).toEqual([0, 1000 / 3, 2000 / 3, 1000]);
    expect(times[3000]).toBe(1_000_000);
  });

  it('poisson: mean gap is 1000/rate and gaps are exponential (CV ≈ 1)', () => {
    const next = arrivalSchedule({ arrival: 'poisson', ratePerSec: 500, seed: 42 });
    const times = take(next, 50_001);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
    expect(mean).toBeGreaterThan(1.96);
    expect(mean).toBeLessThan(2.04);
    expect(sd / mean).toBeGreaterThan(0.97);
    expect(sd / mean).toBeLessThan(1.03);
    expect(gaps.every((g) => g >= 0)).toBe(true);
  });

  it('poisson: the same seed replays the same schedule, another seed does not', () => {
    const a = take(arrivalSchedule({ arrival: 'poisson', ratePerSec: 10, seed: 7 }), 100);
    const b = take(arrivalSchedule({ arrival: 'poisson', ratePerSec: 10, seed: 7 }), 100);
    const c = take(arrivalSchedule({ arrival: 'poisson', ratePerSec: 10, seed: 8 }), 100);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });
});

describe('seededRandom', () => {
  it('yields floats in [0, 1) with a roughly uniform spread', () => {
    const random = seededRandom(3);
    const buckets = new Array<number>(10).fill(0);
    let min = 1;
    let max = 0;
    for (let i = 0; i < 100_000; i++) {
      const u = random();
      min = Math.min(min, u);
      max = Math.max(max, u);
      buckets[Math.floor(u * 10)]!++;
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(1);
    for (const count of buckets) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });
});
