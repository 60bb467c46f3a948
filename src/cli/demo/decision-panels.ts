/**
 * The server's side of a run, for the report: the decision windows a `--decisions` server
 * traced from its guard's channels (see `serve/decision-trace.ts`), cut to the run's time span,
 * and drawn as three panels of the run's card — decisions per second by result, in flight
 * against the limit, time in line.
 *
 * @module
 */
import { formatMs, type LoadResult, type ReportPanel } from '../../load/index.js';
import type { DecisionTraceSnapshot, DecisionWindow } from '../serve/decision-trace.js';
import { decisionsPath } from '../serve/decision-trace.js';
import type { ServerProcess } from './server-process.js';

/** The run's span on the wall clock: from its measured start to its last answer, epoch ms. */
function spanOf(result: LoadResult): { readonly startMs: number; readonly endMs: number } {
  const startMs = Date.parse(result.startedAt);
  return { startMs, endMs: startMs + result.elapsedMs };
}

/** The windows whose middle falls within the run's span, oldest first. */
export function windowsOfRun(
  windows: readonly DecisionWindow[],
  result: LoadResult,
): DecisionWindow[] {
  const { startMs, endMs } = spanOf(result);
  return windows.filter((w) => {
    const middle = w.startMs + w.durationMs / 2;
    return middle >= startMs && middle <= endMs;
  });
}

/**
 * The server's windows over the run just ended, once the last of them has closed (a window
 * closes every `windowMs`, so this waits at most that long past the run's last answer).
 */
export async function fetchRunDecisions(
  target: ServerProcess,
  result: LoadResult,
): Promise<DecisionWindow[]> {
  const { endMs } = spanOf(result);
  const first = await target.getJson<DecisionTraceSnapshot>(decisionsPath);
  const waitMs = endMs + first.windowMs * 1.5 - Date.now();
  if (waitMs <= 0) return windowsOfRun(first.windows, result);
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  return windowsOfRun((await target.getJson<DecisionTraceSnapshot>(decisionsPath)).windows, result);
}

/** Each refusal reason's colour (the report's palette otherwise). */
const reasonColours: Readonly<Record<string, string>> = {
  quota: '#d97706',
  capacity: '#dc2626',
  deadline: '#7c3aed',
  shed: '#db2777',
  overloaded: '#0891b2',
  abandoned: '#64748b',
};

const perSecText = (count: number, ms: number): string =>
  `${(ms > 0 ? (count * 1000) / ms : 0).toFixed(1)}/s`;

const perSec = (count: number, ms: number): number =>
  ms > 0 ? Math.round((count * 1000 * 10) / ms) / 10 : 0;

/** The run's decision panels, from its windows (none when there are no windows). */
export function decisionPanels(
  windows: readonly DecisionWindow[],
  result: LoadResult,
): ReportPanel[] {
  if (windows.length === 0) return [];
  const { startMs } = spanOf(result);
  const t = windows.map((w) => Math.round(w.startMs + w.durationMs - startMs) / 1000);
  const spanMs = windows.reduce((total, w) => total + w.durationMs, 0);
  const source =
    'From the server, per 250 ms window, traced from its guard’s diagnostics channels.';

  const results = ['admitted'];
  for (const w of windows) {
    for (const reason of Object.keys(w.refused))
      if (!results.includes(reason)) results.push(reason);
  }
  if (windows.some((w) => w.abandoned > 0)) results.push('abandoned');
  const countOf = (w: DecisionWindow, r: string): number =>
    r === 'admitted' ? w.admitted : r === 'abandoned' ? w.abandoned : (w.refused[r] ?? 0);
  const decided: ReportPanel = {
    title: 'Server: admitted and refused by reason',
    unit: 'per-second',
    t,
    series: results.map((r) => {
      const total = windows.reduce((n, w) => n + countOf(w, r), 0);
      return {
        label: r === 'admitted' || r === 'abandoned' ? r : `refused: ${r}`,
        values: windows.map((w) => perSec(countOf(w, r), w.durationMs)),
        whole: perSecText(total, spanMs),
        ...(r === 'admitted' ? { colour: '#16a34a' } : {}),
        ...(reasonColours[r] === undefined ? {} : { colour: reasonColours[r] }),
      };
    }),
    caption: source,
  };

  const limits = windows.flatMap((w) => (w.limit === null ? [] : [w.limit]));
  const lo = Math.min(...limits);
  const hi = Math.max(...limits);
  const peak = (f: (w: DecisionWindow) => number): string => `max ${Math.max(...windows.map(f))}`;
  const inFlight: ReportPanel = {
    title: 'Server: in flight vs limit (peak per window)',
    unit: 'count',
    t,
    // Drawn in this order: the limit last, on top of a line that reaches it.
    series: [
      {
        label: 'in line',
        values: windows.map((w) => w.peakQueued),
        whole: peak((w) => w.peakQueued),
        colour: '#d97706',
      },
      {
        label: 'in flight',
        values: windows.map((w) => w.peakInFlight),
        whole: peak((w) => w.peakInFlight),
        colour: '#2563eb',
        fill: true,
      },
      {
        label: 'limit',
        values: windows.map((w) => w.limit),
        whole: limits.length === 0 ? '–' : lo === hi ? String(lo) : `${lo}–${hi}`,
        colour: '#0f172a',
        dashed: true,
      },
    ],
  };

  const waited = windows.reduce((n, w) => n + w.waited, 0);
  const waitSumMs = windows.reduce((n, w) => n + w.waitSumMs, 0);
  const line: ReportPanel = {
    title: 'Server: time in line, of requests leaving it',
    unit: 'ms',
    t,
    series: [
      {
        label: 'max',
        values: windows.map((w) => (w.waited > 0 ? round2(w.waitMaxMs) : null)),
        whole: waited > 0 ? formatMs(Math.max(...windows.map((w) => w.waitMaxMs))) : '–',
        colour: '#dc2626',
      },
      {
        label: 'mean',
        values: windows.map((w) => (w.waited > 0 ? round2(w.waitSumMs / w.waited) : null)),
        whole: waited > 0 ? formatMs(waitSumMs / waited) : '–',
        colour: '#0ea5e9',
      },
    ],
    caption: `${waited.toLocaleString('en-US')} requests waited in line during the run; gaps: nobody left the line in that window.`,
  };
  return [decided, inFlight, line];
}

const round2 = (ms: number): number => Math.round(ms * 100) / 100;
