/**
 * What a load run returns: plain data (JSON-serialisable), so results can be printed, saved,
 * compared across runs and handed to the HTML report.
 *
 * @module
 */
import type { LatencySummary } from './latency-histogram.js';
import type { Outcome } from './outcome.js';

/** Counts of requests by final outcome. */
export type OutcomeCounts = Readonly<Record<Outcome, number>>;

/** Counts in one 1-second window of one group (by completion time; `offered` by send time). */
export interface WindowCounts {
  /** Arrivals scheduled in the window (sent or dropped). */
  readonly offered: number;
  /** Attempts written to a socket, retries included. */
  readonly attempts: number;
  readonly retries: number;
  readonly ok: number;
  /** `ok` within the group's SLO (or deadline). */
  readonly good: number;
  readonly rejected: number;
  readonly error: number;
  readonly timeout: number;
  readonly network: number;
  readonly dropped: number;
}

/** One 1-second window of the whole run. */
export interface WindowStats extends WindowCounts {
  /** 0, 1, 2 … */
  readonly index: number;
  /** Window start, ms after the run started. */
  readonly startMs: number;
  /** Window length (1000, except the last). */
  readonly durationMs: number;
  /** Latency of the `ok` answers that completed in the window, from their intended send time. */
  readonly okP50Ms: number | null;
  readonly okP99Ms: number | null;
  /** Schedule lag p99 of arrivals in the window. */
  readonly lagP99Ms: number | null;
  /** Requests in flight (including those waiting to retry) when the window closed. */
  readonly inFlight: number;
  /** Open connections when the window closed. */
  readonly connections: number;
  /**
   * The window in quarters, in a run of at most 30 s (the report draws a short run at this
   * grain); empty in a longer run, and past 480 steps.
   */
  readonly steps: readonly WindowStep[];
}

/**
 * A part of a window. Its span is measured (when its timer fired, or the window closed), so
 * rates over it are exact; `offered` counts by send time, the rest by completion time. The
 * steps of a window add up to it.
 */
export interface WindowStep {
  /** Step start, ms after the run started. */
  readonly startMs: number;
  readonly durationMs: number;
  /** Latency of the `ok` answers that completed in the step, from their intended send time. */
  readonly okP50Ms: number | null;
  readonly okP99Ms: number | null;
  /** Counts of each group, in the order of {@link LoadResult.groups}. */
  readonly groups: readonly WindowCounts[];
}

/** Cumulative counts while a run is going (for progress lines). */
export interface LoadProgress extends WindowCounts {
  readonly elapsedMs: number;
  readonly inFlight: number;
}

/** Everything measured for one group (or, in `totals`, for all groups together). */
export interface GroupStats extends WindowCounts {
  readonly name: string;
  /** The configured rate (the sum over groups in `totals`). */
  readonly ratePerSec: number;
  /** Requests whose first attempt was sent (`offered − dropped`). */
  readonly sent: number;
  readonly offeredPerSec: number;
  readonly okPerSec: number;
  /** `good` per second of schedule: the number that matters under overload. */
  readonly goodputPerSec: number;
  /** Latency per final outcome, from the intended send time of the first attempt. */
  readonly latencyMs: Readonly<Partial<Record<Exclude<Outcome, 'dropped'>, LatencySummary>>>;
  /** Latency of `ok` from the moment the successful attempt was written (diagnosis only). */
  readonly okFromSendMs: LatencySummary | undefined;
  /** Rejections by status (`429`, `503`). */
  readonly rejectedByStatus: Readonly<Record<string, number>>;
  /** Other statuses by code. */
  readonly errorsByStatus: Readonly<Record<string, number>>;
  /** Network failures by reason (`ECONNREFUSED`, `ECONNRESET`, `closed before responding` …). */
  readonly networkByReason: Readonly<Record<string, number>>;
  /**
   * Dropped arrivals by reason: `connection cap` (every connection busy at `maxConnections`),
   * `connect rate` (no idle connection, and `maxNewConnectionsPerSec` spent), `in-flight cap`
   * (`maxInFlight` reached), `deadline passed` (it could not be sent before its deadline).
   */
  readonly droppedByReason: Readonly<Record<string, number>>;
  /** `Retry-After` of rejections, in ms. */
  readonly retryAfterMs: LatencySummary | undefined;
  /** Rejections that carried no (readable) `Retry-After`. */
  readonly rejectedWithoutRetryAfter: number;
  /** Outcomes of every attempt, retries included (the server's view). */
  readonly attemptOutcomes: OutcomeCounts;
  /** Per-window counts of this group (empty in `totals`; see {@link LoadResult.windows}). */
  readonly windows: readonly WindowCounts[];
}

/** Whether the generator kept its schedule; a run that did not is flagged, not quoted. */
export interface Validity {
  readonly valid: boolean;
  /** Why not, in words (empty when valid). */
  readonly reasons: readonly string[];
  /** Intended → actual send time of first attempts. */
  readonly scheduleLagMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Generator CPU while sending, percent of one core. */
  readonly cpuPercent: number;
  /** Idle share of all the machine's cores while sending, percent (absent where unknown). */
  readonly machineIdlePercent?: number;
  /** Idle share of the machine in its busiest second while sending, percent (absent where unknown). */
  readonly machineLeastIdlePercent?: number;
  readonly dropped: number;
  readonly droppedFraction: number;
  readonly thresholds: {
    readonly maxLagP99Ms: number;
    readonly maxCpuPercent: number;
    readonly maxDroppedFraction: number;
  };
}

/** The machine the run came from (absolute numbers mean little without it). */
export interface MachineInfo {
  readonly cpuModel: string;
  readonly cpus: number;
  readonly node: string;
  readonly platform: string;
  /** 1-minute load average at the end of the run. */
  readonly loadAvg1: number;
}

/** The result of {@link runLoad}. */
export interface LoadResult {
  readonly label: string;
  readonly scenario: string | undefined;
  readonly series: string | undefined;
  readonly url: string;
  /** Wall-clock start, ISO 8601. */
  readonly startedAt: string;
  /** Scheduled length, ms. */
  readonly durationMs: number;
  /** Until the last answer (or the drain limit), ms. */
  readonly elapsedMs: number;
  /** The run was stopped early through `signal`. */
  readonly aborted: boolean;
  readonly config: {
    /** Unrecorded warm-up before the measured schedule, ms. */
    readonly warmupMs: number;
    readonly connection: 'keep-alive' | 'new';
    readonly maxConnections: number;
    readonly maxInFlight: number;
    readonly seed: number;
    readonly groups: readonly {
      readonly name: string;
      readonly ratePerSec: number;
      readonly arrival: string;
      readonly method: string;
      readonly path: string;
      readonly deadlineMs: number;
      readonly clients: number;
      readonly startMs: number;
      readonly durationMs: number;
      readonly retry: string;
    }[];
  };
  readonly totals: GroupStats;
  readonly groups: readonly GroupStats[];
  readonly windows: readonly WindowStats[];
  /** Windows past `maxWindows`, counted but not kept. */
  readonly windowsDropped: number;
  /** Most connections open at once. */
  readonly peakConnections: number;
  /** Connections opened in all, the warm ones included (a keep-alive run needs few). */
  readonly connectionsOpened: number;
  /** Requests re-sent on a fresh connection because a pooled one had been closed by the server. */
  readonly staleReconnects: number;
  readonly validity: Validity;
  readonly machine: MachineInfo;
}
