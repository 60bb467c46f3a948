/**
 * Shapes load results into the compact data the report's page draws: per-run columns of
 * rates (per step of a short run, else per second), the same per group, summaries without
 * windows, and the validity verdicts.
 *
 * @module
 */
import type { GroupStats, LoadResult, MachineInfo, WindowCounts } from '../result.js';
import { windowMs } from '../windows.js';
import { checkedPanel, type ReportPanel } from './report-panel.js';
import { chartPoints, type ChartPoint } from './report-points.js';

/** A run as the report takes it: a result, plus what only the report reads. */
export type ReportRun = LoadResult & {
  /**
   * Extra figures, shown under the run in the summary table as `title: value`
   * (e.g. `{ 'server peak RSS': '84 MB' }`).
   */
  readonly notes?: Readonly<Record<string, string | number>>;
  /**
   * Whether the run is a point of the goodput-vs-offered-load chart. Leave out runs whose
   * goodput is not a matter of how much was offered (a fairness scenario, where a quota refuses
   * on purpose), or the chart mixes them with load runs at the same rate. @default true
   */
  readonly goodputChart?: boolean;
  /**
   * The group whose goodput the run's card shows first: the one the scenario is about (the
   * polite clients next to a greedy one), when the run's total would hide it.
   */
  readonly leadGroup?: string;
  /**
   * More charts for the run's card, under its own: figures measured elsewhere over the run's
   * time (the demo draws its server's decisions). @default []
   */
  readonly panels?: readonly ReportPanel[];
};

/** Options of {@link renderReport}. */
export interface ReportOptions {
  /** @default 'Spillway load report' */
  readonly title?: string;
  /** A line under the title (what was run, against what). */
  readonly subtitle?: string;
  /**
   * The runs, in the order to show them. Runs sharing a `scenario` are drawn side by side
   * with shared axes; runs sharing a `series` form one series of points in the goodput chart.
   */
  readonly runs: readonly ReportRun[];
  /** Known capacity of the target (req/s): goodput is also shown as a fraction of it. */
  readonly capacityPerSec?: number;
  /** Paragraphs shown under the title (setup, caveats). */
  readonly notes?: readonly string[];
  /** Timestamp shown in the report. @default now */
  readonly generatedAt?: Date;
}

type Summary = Omit<GroupStats, 'windows'>;

/** What the page's script receives. */
export interface ReportData {
  readonly title: string;
  readonly subtitle: string;
  readonly notes: readonly string[];
  readonly generatedAt: string;
  readonly capacityPerSec: number | null;
  readonly machine: MachineInfo | null;
  readonly runs: readonly {
    readonly label: string;
    readonly scenario: string;
    readonly series: string;
    readonly url: string;
    readonly durationMs: number;
    readonly connection: string;
    readonly retry: string;
    readonly valid: boolean;
    readonly reasons: readonly string[];
    readonly lagP99Ms: number;
    readonly cpuPercent: number;
    readonly totals: Summary;
    readonly groups: readonly Summary[];
    readonly notes: Readonly<Record<string, string | number>>;
    readonly goodputChart: boolean;
    /** The group to show first, when it is one of the run's. */
    readonly leadGroup: string | null;
    /** The finest span of the time charts' points, ms (250 for a short run, else 1000). */
    readonly grainMs: number;
    /** Columns: point end (s), then rates (per second) and latency percentiles (ms). */
    readonly timeline: {
      readonly t: number[];
      readonly offered: number[];
      readonly ok: number[];
      readonly rejected: number[];
      readonly timeout: number[];
      readonly error: number[];
      readonly network: number[];
      readonly dropped: number[];
      readonly p50: (number | null)[];
      readonly p99: (number | null)[];
    };
    /**
     * Columns per group (the lead group first, at most {@link maxChartGroups}), at the
     * timeline's points: offered and good per second. Empty for a run of one group.
     */
    readonly groupTimelines: readonly {
      readonly name: string;
      readonly offered: number[];
      readonly good: number[];
    }[];
    /** The run's extra charts (see {@link ReportRun.panels}). */
    readonly panels: readonly ReportPanel[];
  }[];
}

/** Groups a run's group chart draws at most (one colour each). */
const maxChartGroups = 8;

const strip = ({ windows: _windows, ...rest }: GroupStats): Summary => rest;

/** `count` per second of `spanMs`, to a tenth. */
const perSec = (count: number, spanMs: number): number =>
  Math.round((count * 1000 * 10) / Math.max(spanMs, 1)) / 10;

/**
 * The part of a point inside a schedule that starts at `startMs` and lasts `durationMs`:
 * arrivals stop at the end of the schedule, while answers keep coming as the run drains. A
 * point wholly outside counts over its whole span (its few stragglers read as ~0).
 */
function scheduledMs(p: ChartPoint, startMs: number, durationMs: number): number {
  const inside =
    Math.min(p.startMs + p.durationMs, startMs + durationMs) - Math.max(p.startMs, startMs);
  return inside > 0 ? inside : p.durationMs;
}

/** The run's groups to chart, the lead one first. */
function chartedGroups(run: ReportRun): number[] {
  if (run.groups.length < 2) return [];
  const order = run.groups.map((_, i) => i);
  const lead = run.groups.findIndex((g) => g.name === run.leadGroup);
  if (lead > 0) order.unshift(...order.splice(lead, 1));
  return order.slice(0, maxChartGroups);
}

/** The data the report page draws. */
export function reportData(options: ReportOptions): ReportData {
  return {
    title: options.title ?? 'Spillway load report',
    subtitle: options.subtitle ?? '',
    notes: options.notes ?? [],
    generatedAt: (options.generatedAt ?? new Date()).toISOString(),
    capacityPerSec: options.capacityPerSec ?? null,
    machine: options.runs[0]?.machine ?? null,
    runs: options.runs.map((run) => {
      const points = chartPoints(run);
      const rate = (key: keyof WindowCounts): number[] =>
        points.map((p) => perSec(p.total[key], p.durationMs));
      const retries = [...new Set(run.config.groups.map((g) => g.retry))];
      return {
        label: run.label,
        scenario: run.scenario ?? run.label,
        series: run.series ?? run.label,
        url: run.url,
        durationMs: run.durationMs,
        connection: run.config.connection,
        retry: retries.join(', '),
        valid: run.validity.valid,
        reasons: run.validity.reasons,
        lagP99Ms: run.validity.scheduleLagMs.p99,
        cpuPercent: run.validity.cpuPercent,
        totals: strip(run.totals),
        groups: run.groups.map(strip),
        notes: run.notes ?? {},
        goodputChart: run.goodputChart !== false,
        leadGroup: run.groups.some((g) => g.name === run.leadGroup) ? run.leadGroup! : null,
        grainMs: points.reduce((min, p) => Math.min(min, p.grainMs), windowMs),
        timeline: {
          t: points.map((p) => (p.startMs + p.durationMs) / 1000),
          offered: points.map((p) => perSec(p.total.offered, scheduledMs(p, 0, run.durationMs))),
          ok: rate('ok'),
          rejected: rate('rejected'),
          timeout: rate('timeout'),
          error: rate('error'),
          network: rate('network'),
          dropped: rate('dropped'),
          p50: points.map((p) => p.okP50Ms),
          p99: points.map((p) => p.okP99Ms),
        },
        groupTimelines: chartedGroups(run).map((g) => {
          const { startMs, durationMs } = run.config.groups[g]!;
          return {
            name: run.groups[g]!.name,
            offered: points.map((p) =>
              perSec(p.groups[g]!.offered, scheduledMs(p, startMs, durationMs)),
            ),
            good: points.map((p) => perSec(p.groups[g]!.good, p.durationMs)),
          };
        }),
        panels: (run.panels ?? []).map(checkedPanel),
      };
    }),
  };
}
