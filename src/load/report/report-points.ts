/**
 * The points of a run's time charts: the steps of its windows where they have them (a short
 * run, drawn at a quarter second), else the 1-second windows themselves; each point with the
 * counts of every group, so the report can chart groups at the same grain as the run.
 *
 * @module
 */
import { emptyCounts } from '../recorder.js';
import type { LoadResult, WindowCounts } from '../result.js';
import { stepMs, windowMs } from '../windows.js';

/** One point of a run's time charts. */
export interface ChartPoint {
  /** Start, ms after the run started. */
  readonly startMs: number;
  readonly durationMs: number;
  /** The length of a whole point of its kind: a step's or a window's, ms. */
  readonly grainMs: number;
  /** Counts of every group together. */
  readonly total: WindowCounts;
  /** Counts of each group, in the order of the run's groups. */
  readonly groups: readonly WindowCounts[];
  readonly okP50Ms: number | null;
  readonly okP99Ms: number | null;
}

/** The counts of `parts` added up. */
function sum(parts: readonly WindowCounts[]): WindowCounts {
  const total = emptyCounts();
  const keys = Object.keys(total) as (keyof WindowCounts)[];
  for (const part of parts) for (const k of keys) total[k] += part[k];
  return total;
}

type Span = Pick<ChartPoint, 'startMs' | 'durationMs' | 'okP50Ms' | 'okP99Ms'>;

const span = (w: Span, grainMs: number): Span & { grainMs: number } => ({
  startMs: w.startMs,
  durationMs: w.durationMs,
  grainMs,
  okP50Ms: w.okP50Ms,
  okP99Ms: w.okP99Ms,
});

/**
 * The run's points, in order. Points shorter than half their kind (the tail of a run, a step
 * cut short by a stall) are left out: a rate over a sliver of time is noise.
 */
export function chartPoints(run: LoadResult): ChartPoint[] {
  const points: ChartPoint[] = [];
  run.windows.forEach((w, i) => {
    if (w.steps.length === 0) {
      if (w.durationMs * 2 < windowMs) return;
      // A group's windows are kept with the run's, index for index.
      const groups = run.groups.map((g) => g.windows[i]!);
      points.push({ ...span(w, windowMs), total: w, groups });
      return;
    }
    for (const s of w.steps) {
      if (s.durationMs * 2 >= stepMs)
        points.push({ ...span(s, stepMs), total: sum(s.groups), groups: s.groups });
    }
  });
  return points;
}
