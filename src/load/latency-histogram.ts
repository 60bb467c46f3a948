/**
 * HDR histograms for latencies, on Node's built-in `perf_hooks.createHistogram` (HdrHistogram_c
 * underneath): constant memory per histogram whatever the sample count, 3 significant figures
 * (within 0.1 %), mergeable with `add`. Values are recorded in whole microseconds.
 *
 * @module
 */
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

/** Largest recordable latency: one hour, in µs. Longer values are clamped to it. */
const highestUs = 3_600_000_000;

/** A percentile summary in milliseconds (3 decimals). */
export interface LatencySummary {
  readonly count: number;
  readonly min: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** A new, empty latency histogram (1 µs to 1 h, 3 significant figures). */
export function latencyHistogram(): RecordableHistogram {
  return createHistogram({ lowest: 1, highest: highestUs, figures: 3 });
}

/** Records `ms` (clamped to [1 µs, 1 h]). */
export function recordMs(histogram: RecordableHistogram, ms: number): void {
  const us = Math.round(ms * 1000);
  histogram.record(us < 1 ? 1 : us > highestUs ? highestUs : us);
}

const round3 = (us: number): number => Math.round(us) / 1000;

/** The summary of a histogram, or `undefined` when it holds no samples. */
export function summarise(histogram: RecordableHistogram): LatencySummary | undefined {
  if (histogram.count === 0) return undefined;
  return {
    count: histogram.count,
    min: round3(histogram.min),
    mean: round3(histogram.mean),
    p50: round3(histogram.percentile(50)),
    p90: round3(histogram.percentile(90)),
    p99: round3(histogram.percentile(99)),
    p999: round3(histogram.percentile(99.9)),
    max: round3(histogram.max),
  };
}

/** One percentile in ms, or `null` without samples (JSON-friendly, a gap in a chart). */
export function percentileMs(histogram: RecordableHistogram, percentile: number): number | null {
  return histogram.count === 0 ? null : round3(histogram.percentile(percentile));
}

/** A new histogram holding the samples of all `histograms`. */
export function mergeHistograms(histograms: Iterable<RecordableHistogram>): RecordableHistogram {
  const merged = latencyHistogram();
  for (const histogram of histograms) merged.add(histogram);
  return merged;
}
