/**
 * Builds a run's {@link LoadResult} from what its parts measured: plain data, the options it
 * ran with, the statistics of every group and of all together, and whether the generator kept
 * its schedule.
 *
 * @module
 */
import { arch, cpus, loadavg } from 'node:os';
import type { RecordableHistogram } from 'node:perf_hooks';
import { percentileMs } from './latency-histogram.js';
import type { ResolvedOptions } from './options.js';
import { buildStats, type GroupRecorder } from './recorder.js';
import type { LoadResult, MachineInfo, WindowStats } from './result.js';
import { formatRetryPolicy } from './retry-policy.js';
import { assessValidity } from './validity.js';

/** What a run measured, as {@link buildResult} needs it. */
export interface RunMeasures {
  readonly options: ResolvedOptions;
  /** One per group, in the order of `options.groups`. */
  readonly recorders: readonly GroupRecorder[];
  /** Schedule lag of every measured arrival. */
  readonly lag: RecordableHistogram;
  readonly windows: readonly WindowStats[];
  readonly windowsDropped: number;
  readonly startedAt: string;
  /** Until the last answer (or the drain limit), ms. */
  readonly elapsedMs: number;
  readonly aborted: boolean;
  readonly cpuPercent: number;
  /** Idle share of the whole machine's CPU time meanwhile, percent, where known. */
  readonly machineIdlePercent: number | undefined;
  /** Idle share of the machine in its busiest second, percent, where known. */
  readonly machineLeastIdlePercent: number | undefined;
  readonly peakConnections: number;
  readonly connectionsOpened: number;
  readonly staleReconnects: number;
}

/** The result of a run. */
export function buildResult(run: RunMeasures): LoadResult {
  const o = run.options;
  const { lag, recorders } = run;
  const groups = recorders.map((r, i) => r.stats(o.groups[i]!.durationMs));
  const totals = buildStats({
    name: 'total',
    ratePerSec: o.groups.reduce((sum, g) => sum + g.ratePerSec, 0),
    durationMs: o.durationMs,
    recorders,
    windows: [],
  });
  return {
    label: o.label,
    scenario: o.scenario,
    series: o.series,
    url: o.url.href,
    startedAt: run.startedAt,
    durationMs: o.durationMs,
    elapsedMs: Math.round(run.elapsedMs),
    aborted: run.aborted,
    config: {
      warmupMs: o.warmupMs,
      connection: o.connection,
      maxConnections: o.maxConnections,
      maxInFlight: o.maxInFlight,
      seed: o.seed,
      groups: o.groups.map((g) => ({
        name: g.name,
        ratePerSec: g.ratePerSec,
        arrival: g.arrival,
        method: g.method,
        path: g.path,
        deadlineMs: g.deadlineMs,
        clients: g.clients,
        startMs: g.startMs,
        durationMs: g.durationMs,
        retry: formatRetryPolicy(g.retry),
      })),
    },
    totals,
    groups,
    windows: run.windows,
    windowsDropped: run.windowsDropped,
    peakConnections: run.peakConnections,
    connectionsOpened: run.connectionsOpened,
    staleReconnects: run.staleReconnects,
    validity: assessValidity({
      scheduleLagMs: {
        p50: percentileMs(lag, 50) ?? 0,
        p99: percentileMs(lag, 99) ?? 0,
        max: lag.count === 0 ? 0 : Math.round(lag.max) / 1000,
      },
      cpuPercent: run.cpuPercent,
      machineIdlePercent: run.machineIdlePercent,
      machineLeastIdlePercent: run.machineLeastIdlePercent,
      offered: totals.offered,
      dropped: totals.dropped,
      droppedByReason: totals.droppedByReason,
      thresholds: o.validity,
    }),
    machine: machineInfo(),
  };
}

/** The machine the run came from, as the run ends. */
function machineInfo(): MachineInfo {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cpus: cpu.length,
    node: process.version,
    platform: `${process.platform} ${arch()}`,
    loadAvg1: Math.round(loadavg()[0]! * 100) / 100,
  };
}
