/**
 * The figures the broker scenario's table, checks and JSON share, read off one way's run:
 * what was offered, admitted, refused and processed, how much of it within its life, how old
 * messages were when processed, and how far the broker's lag went.
 *
 * @module
 */
import type { LoadResult } from '../../../load/result.js';
import type { ModeRun } from './run-mode.js';
import { capacityPerSec, type BoundMode } from './settings.js';

/** One way's run, measured and summed up. */
export interface ModeRecord {
  readonly run: ModeRun;
  readonly result: LoadResult;
  readonly figures: ModeFigures;
}

export interface ModeFigures {
  readonly mode: BoundMode;
  readonly offered: number;
  /** Admitted by the producer (published or tried). */
  readonly admitted: number;
  /** Refused by the gate (`later`). */
  readonly refused: number;
  /** Acknowledged by the broker. */
  readonly published: number;
  /** Processed within the run (those finished after it are in `processedAfter`). */
  readonly processed: number;
  readonly processedAfter: number;
  /** Processed within their life. */
  readonly useful: number;
  readonly usefulPerSec: number;
  /** `usefulPerSec` ÷ the consumer's capacity. */
  readonly usefulOfCapacity: number;
  /** Useful per second over the second half of the run, ÷ capacity. */
  readonly usefulOfCapacityLastHalf: number;
  /** Share of processed messages older than their life when processed. */
  readonly lateShare: number;
  readonly ageP50Ms: number | null;
  readonly ageP99Ms: number | null;
  readonly ageMaxMs: number | null;
  /** Most messages the broker held for the consumer at a sample. */
  readonly maxLag: number | null;
  /** Oldest unfinished message at any sample, where the broker tells it. */
  readonly maxOldestAgeMs: number | null;
  readonly expired: number;
  /** Left unprocessed in the broker at the end. */
  readonly left: number;
  readonly retryAfterP50Ms: number | null;
}

export function figuresOf(run: ModeRun, result: LoadResult): ModeFigures {
  const t = result.totals;
  const seconds = result.windows.length;
  const half = Math.floor(seconds / 2);
  const lastHalf = result.windows.slice(half).reduce((sum, w) => sum + w.good, 0);
  const lastHalfMs = result.windows.slice(half).reduce((sum, w) => sum + w.durationMs, 0);
  const lags = run.recorder.lag;
  const ages = lags.flatMap((s) => (s.oldestAgeMs === undefined ? [] : [s.oldestAgeMs]));
  const ok = t.latencyMs.ok;
  const usefulPerSec = t.good / (result.durationMs / 1_000);
  return {
    mode: run.mode,
    offered: t.offered,
    admitted: t.attempts,
    refused: t.rejected,
    published: run.published,
    processed: t.ok,
    processedAfter: run.recorder.processedAfter,
    useful: t.good,
    usefulPerSec,
    usefulOfCapacity: usefulPerSec / capacityPerSec,
    usefulOfCapacityLastHalf:
      lastHalfMs === 0 ? 0 : (lastHalf / (lastHalfMs / 1_000)) * (1 / capacityPerSec),
    lateShare: t.ok === 0 ? 0 : (t.ok - t.good) / t.ok,
    ageP50Ms: ok?.p50 ?? null,
    ageP99Ms: ok?.p99 ?? null,
    ageMaxMs: ok?.max ?? null,
    maxLag: lags.length === 0 ? null : Math.max(...lags.map((s) => s.messages)),
    maxOldestAgeMs: ages.length === 0 ? null : Math.max(...ages),
    expired: run.expired,
    left: run.left,
    retryAfterP50Ms: t.retryAfterMs?.p50 ?? null,
  };
}
