import { describe, expect, it } from 'vitest';
import { seededRandom } from './arrivals.js';
import {
  latencyHistogram,
  mergeHistograms,
  percentileMs,
  recordMs,
  summarise,
} from './latency-histogram.js';

/** The exact percentile by the same rule HdrHistogram uses: the smallest value with ≥ p % at or below it. */
function exact(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const datasets: Record<string, (random: () => number) => number> = {
  uniform: (r) => 1 + r() * 999,
  lognormal: (r) =>
    Math.exp(2 + 1.5 * Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())),
  bimodal: (r) => (r() < 0.9 ? 2 + r() : 900 + r() * 200),
};

describe('latency histograms', () => {
  for (const [name, draw] of Object.entries(datasets)) {
    it(`percentiles are within 1 % of exact (${name})`, () => {
      const random = seededRandom(11);
      const values = Array.from({ length: 50_000 }, () => Math.round(draw(random) * 1000) / 1000);
      const histogram = latencyHistogram();
      for (const v of values) recordMs(histogram, v);
      const sorted = [...values].sort((a, b) => a - b);
      for (const p of [50, 90, 99, 99.9]) {
        const want = exact(sorted, p);
        expect(Math.abs(percentileMs(histogram, p)! - want) / want).toBeLessThan(0.01);
      }
      const s = summarise(histogram)!;
      expect(s.count).toBe(values.length);
      expect(Math.abs(s.max - sorted.at(-1)!) / sorted.at(-1)!).toBeLessThan(0.01);
    });
  }

  it('merging gives the percentiles of the union', () => {
    const a = latencyHistogram();
    const b = latencyHistogram();
    for (let i = 1; i <= 1000; i++) recordMs(i % 2 ? a : b, i);
    const merged = summarise(mergeHistograms([a, b]))!;
    expect(merged.count).toBe(1000);
    expect(merged.p50).toBeCloseTo(500, 0);
  });

  it('clamps values below 1 µs and above an hour; empty histograms summarise to nothing', () => {
    const h = latencyHistogram();
    expect(summarise(h)).toBeUndefined();
    expect(percentileMs(h, 99)).toBeNull();
    recordMs(h, 0);
    recordMs(h, 10 * 3_600_000);
    expect(summarise(h)!.min).toBe(0.001);
    expect(summarise(h)!.max).toBeGreaterThanOrEqual(3_600_000 * 0.999);
  });
});
