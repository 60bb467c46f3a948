/**
 * One way of running as the load generator's `LoadResult`, so the demo's report draws it as it
 * draws an HTTP run: offered = messages due, ok = processed, good = processed within their
 * life, rejected = refused by the gate (`later`), timeout = expired in the broker, dropped and
 * error = not published; the latency of ok = a message's age when processed. Validity is the
 * producer's (did it keep its schedule) and the consumer's (did its handlers take the service
 * time the capacity assumes).
 *
 * @module
 */
import { arch, cpus, loadavg } from 'node:os';
import { percentileMs } from '../../../load/latency-histogram.js';
import { buildStats } from '../../../load/recorder.js';
import type { LoadResult, WindowStats } from '../../../load/result.js';
import { assessValidity } from '../../../load/validity.js';
import type { ModeRun } from './run-mode.js';
import {
  lifeMs,
  maxInFlightPublishes,
  maxScheduleLagP99Ms,
  maxServiceLateP99Ms,
  offeredPerSec,
  type BrokerName,
} from './settings.js';

/** The run as a `LoadResult` for the report and the JSON. */
export function modeResult(run: ModeRun, broker: BrokerName): LoadResult {
  const rec = run.recorder;
  const durationMs = rec.durationMs;
  const windows: WindowStats[] = rec.seconds.map((s, index) => {
    const ages = rec.agesOf(index);
    return {
      ...s.counts,
      index,
      startMs: index * 1_000,
      durationMs: Math.min(1_000, durationMs - index * 1_000),
      okP50Ms: ages.p50,
      okP99Ms: ages.p99,
      lagP99Ms: null,
      inFlight: 0,
      connections: 1,
      steps: [],
    };
  });
  const stats = buildStats({
    name: 'messages',
    ratePerSec: offeredPerSec,
    durationMs,
    recorders: [rec.group],
    windows: rec.seconds.map((s) => s.counts),
  });
  // A refusal by the gate has no HTTP status: it is the `later` signal.
  const group = { ...stats, rejectedByStatus: rec.refused > 0 ? { later: rec.refused } : {} };
  const lag = rec.scheduleLag;
  const validity = assessValidity({
    scheduleLagMs: {
      p50: percentileMs(lag, 50) ?? 0,
      p99: percentileMs(lag, 99) ?? 0,
      max: lag.count === 0 ? 0 : Math.round(lag.max) / 1_000,
    },
    cpuPercent: run.cpuPercent,
    machineIdlePercent: run.machineIdlePercent,
    offered: group.offered,
    dropped: group.dropped,
    droppedByReason: group.droppedByReason,
    thresholds: {
      maxLagP99Ms: maxScheduleLagP99Ms,
      maxCpuPercent: 90,
      maxDroppedFraction: 0,
    },
  });
  const lateP99Ms = percentileMs(rec.serviceLate, 99) ?? 0;
  const reasons = [
    ...validity.reasons,
    ...(lateP99Ms > maxServiceLateP99Ms
      ? [
          `the consumer noticed its jobs' ends ${lateP99Ms.toFixed(1)} ms late (p99 > ${maxServiceLateP99Ms} ms): the machine held it up`,
        ]
      : []),
    ...(run.aborted ? ['stopped before the end'] : []),
  ];
  return {
    label: `${broker} · ${run.mode}`,
    scenario: `broker: ${broker}`,
    series: run.mode,
    url: run.where,
    startedAt: run.startedAt,
    durationMs,
    elapsedMs: durationMs,
    aborted: run.aborted,
    config: {
      warmupMs: 0,
      connection: 'keep-alive',
      maxConnections: 1,
      maxInFlight: maxInFlightPublishes,
      seed: 0,
      groups: [
        {
          name: 'messages',
          ratePerSec: offeredPerSec,
          arrival: 'uniform',
          method: 'PUBLISH',
          path: run.where,
          deadlineMs: lifeMs,
          clients: 1,
          startMs: 0,
          durationMs,
          retry: 'none',
        },
      ],
    },
    totals: { ...group, name: 'total', windows: [] },
    groups: [group],
    windows,
    windowsDropped: 0,
    peakConnections: 1,
    connectionsOpened: 1,
    staleReconnects: 0,
    validity: { ...validity, valid: reasons.length === 0, reasons },
    machine: {
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      cpus: cpus().length,
      node: process.version,
      platform: `${process.platform} ${arch()}`,
      loadAvg1: Math.round(loadavg()[0]! * 100) / 100,
    },
  };
}
