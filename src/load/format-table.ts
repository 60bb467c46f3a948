/**
 * Plain-text tables of load results for terminals and logs: one row per group (and a total
 * when there are several), outcomes apart, latency per outcome, and whether the generator kept
 * its schedule.
 *
 * @module
 */
import type { LatencySummary } from './latency-histogram.js';
import type { GroupStats, LoadResult } from './result.js';

/** `12.3 ms`, `1,234 ms`, or `–` without samples. */
export function formatMs(ms: number | undefined | null): string {
  if (ms === undefined || ms === null) return '–';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

const count = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
const perSec = (n: number): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: n < 100 ? 1 : 0 });

function byStatus(map: Readonly<Record<string, number>>): string {
  const parts = Object.entries(map).map(([status, n]) => `${status}: ${count(n)}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

const p = (s: LatencySummary | undefined, key: 'p50' | 'p99'): string => formatMs(s?.[key]);

const header = [
  'group',
  'offered/s',
  'sent',
  'ok',
  'goodput/s',
  'ok p50',
  'ok p99',
  'rejected',
  'rej p99',
  'error',
  'timeout',
  'network',
  'dropped',
];

function row(g: GroupStats, capacityPerSec: number | undefined): string[] {
  const cells = [
    g.name,
    perSec(g.offeredPerSec),
    count(g.sent),
    count(g.ok),
    perSec(g.goodputPerSec),
    p(g.latencyMs.ok, 'p50'),
    p(g.latencyMs.ok, 'p99'),
    `${count(g.rejected)}${byStatus(g.rejectedByStatus)}`,
    p(g.latencyMs.rejected, 'p99'),
    `${count(g.error)}${byStatus(g.errorsByStatus)}`,
    count(g.timeout),
    count(g.network),
    count(g.dropped),
  ];
  if (capacityPerSec !== undefined)
    cells.splice(5, 0, (g.goodputPerSec / capacityPerSec).toFixed(2));
  return cells;
}

/** Aligns rows into columns (text left, numbers right). */
export function alignColumns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * The validity verdict in one or more lines. It judges the generator, never the result: a run
 * that kept its schedule may have measured nothing but refused connections, so its line says
 * what held rather than calling the run valid.
 */
export function formatValidity(result: LoadResult): string {
  const v = result.validity;
  const figures =
    `schedule lag p50 ${formatMs(v.scheduleLagMs.p50)}, p99 ${formatMs(v.scheduleLagMs.p99)}, ` +
    `max ${formatMs(v.scheduleLagMs.max)}; generator CPU ${v.cpuPercent} %` +
    (v.machineIdlePercent === undefined ? '' : `, machine ${v.machineIdlePercent} % idle`) +
    (v.machineLeastIdlePercent === undefined
      ? ''
      : ` (${v.machineLeastIdlePercent} % in its busiest second)`) +
    `; dropped ${count(v.dropped)}`;
  if (v.valid) return `generator kept its schedule: ${figures}`;
  return [
    `NOT VALID — do not quote these numbers: ${figures}`,
    ...v.reasons.map((r) => `  - ${r}`),
  ].join('\n');
}

/** Options of {@link formatTable}. */
export interface FormatTableOptions {
  /** Known capacity (req/s): adds a `G` column, goodput ÷ capacity. */
  readonly capacityPerSec?: number;
}

/** A summary table of one run: its groups, then the total when there are several. */
export function formatTable(result: LoadResult, options: FormatTableOptions = {}): string {
  const { capacityPerSec } = options;
  const head = [...header];
  if (capacityPerSec !== undefined) head.splice(5, 0, 'G');
  const rows = [head, ...result.groups.map((g) => row(g, capacityPerSec))];
  if (result.groups.length > 1) rows.push(row(result.totals, capacityPerSec));
  const retries =
    result.totals.retries > 0
      ? `\nattempts ${count(result.totals.attempts)} for ${count(result.totals.sent)} requests (${count(result.totals.retries)} retries)`
      : '';
  const title = `${result.label}: ${(result.durationMs / 1000).toFixed(1)} s, ${result.config.connection} connections (peak ${count(result.peakConnections)})`;
  return `${title}\n${alignColumns(rows)}${retries}\n${formatValidity(result)}`;
}
