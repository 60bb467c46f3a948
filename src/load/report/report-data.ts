/**
 * Shapes load results into the compact data the report's page draws: per-run columns of
 * per-second rates, summaries without windows, and the validity verdicts.
 *
 * @module
 */
import type { GroupStats, LoadResult, MachineInfo } from '../result.js';

/** A run as the report takes it: a result, plus optional extra columns (e.g. server RSS). */
export type ReportRun = LoadResult & {
  /** Extra cells for the summary table, by column title (e.g. `{ 'server peak RSS': '84 MB' }`). */
  readonly notes?: Readonly<Record<string, string | number>>;
  /**
   * Whether the run is a point of the goodput-vs-offered-load chart. Leave out runs whose
   * goodput is not a matter of how much was offered (a fairness scenario, where a quota refuses
   * on purpose), or the chart mixes them with load runs at the same rate. @default true
   */
  readonly goodputChart?: boolean;
};

/** Options of {@link renderReport}. */
export interface ReportOptions {
  /** @default 'Spillway load report' */
  readonly title?: string;
  /** A line under the title (what was run, against what). */
  readonly subtitle?: string;
  /**
   * The runs, in the order to show them. Runs sharing a `scenario` are drawn side by side
   * with shared axes; runs sharing a `series` form one line in the goodput chart.
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
    /** Columns: window end (s), then per-second rates and latency percentiles (ms). */
    readonly windows: {
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
  }[];
}

const strip = ({ windows: _windows, ...rest }: GroupStats): Summary => rest;

/** Windows shorter than this (the tail of a run) are left out of the charts: too noisy. */
const minWindowMs = 500;

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
      const windows = run.windows.filter((w) => w.durationMs >= minWindowMs);
      const rate = (
        pick: (w: (typeof windows)[number]) => number,
        spanMs = (w: (typeof windows)[number]) => w.durationMs,
      ) => windows.map((w) => Math.round((pick(w) * 1000 * 10) / Math.max(spanMs(w), 1)) / 10);
      // Arrivals stop at the end of the schedule; answers keep coming while the run drains.
      const scheduled = (w: (typeof windows)[number]): number =>
        Math.min(w.durationMs, Math.max(0, run.durationMs - w.startMs)) || w.durationMs;
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
        windows: {
          t: windows.map((w) => (w.startMs + w.durationMs) / 1000),
          offered: rate((w) => w.offered, scheduled),
          ok: rate((w) => w.ok),
          rejected: rate((w) => w.rejected),
          timeout: rate((w) => w.timeout),
          error: rate((w) => w.error),
          network: rate((w) => w.network),
          dropped: rate((w) => w.dropped),
          p50: windows.map((w) => w.okP50Ms),
          p99: windows.map((w) => w.okP99Ms),
        },
      };
    }),
  };
}
