/**
 * Where a run's measurements accumulate: counters, per-outcome HDR histograms, 1-second
 * windows and their steps, per group. Memory is bounded: a fixed number of histograms per
 * group, windows up to a cap, and maps keyed by status code or a capped set of failure reasons.
 *
 * @module
 */
import type { RecordableHistogram } from 'node:perf_hooks';
import {
  latencyHistogram,
  mergeHistograms,
  recordMs,
  summarise,
  type LatencySummary,
} from './latency-histogram.js';
import { outcomes, type Outcome } from './outcome.js';
import type { GroupStats, WindowCounts } from './result.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Timed = Exclude<Outcome, 'dropped'>;

/** Distinct network-failure reasons kept; others are counted as `other`. */
const maxReasons = 32;

export function emptyCounts(): Mutable<WindowCounts> {
  return {
    offered: 0,
    attempts: 0,
    retries: 0,
    ok: 0,
    good: 0,
    rejected: 0,
    error: 0,
    timeout: 0,
    network: 0,
    dropped: 0,
  };
}

function emptyOutcomes(): Record<Outcome, number> {
  return { ok: 0, rejected: 0, error: 0, timeout: 0, network: 0, dropped: 0 };
}

function bump(map: Map<string, number>, key: string, cap: number): void {
  const k = map.has(key) || map.size < cap ? key : 'other';
  map.set(k, (map.get(k) ?? 0) + 1);
}

/** Counts and histograms of one group. */
export class GroupRecorder {
  readonly name: string;
  readonly ratePerSec: number;
  readonly totals = emptyCounts();
  readonly window = emptyCounts();
  readonly windows: WindowCounts[] = [];
  /** The window's counts when its current step began. */
  readonly #stepStart = emptyCounts();
  readonly attemptOutcomes = emptyOutcomes();
  readonly rejectedByStatus = new Map<string, number>();
  readonly errorsByStatus = new Map<string, number>();
  readonly networkByReason = new Map<string, number>();
  readonly droppedByReason = new Map<string, number>();
  rejectedWithoutRetryAfter = 0;
  readonly latency: Partial<Record<Timed, RecordableHistogram>> = {};
  #okFromSend: RecordableHistogram | undefined;
  #retryAfter: RecordableHistogram | undefined;

  constructor(name: string, ratePerSec: number) {
    this.name = name;
    this.ratePerSec = ratePerSec;
  }

  /** An arrival was scheduled (sent or not). */
  offered(): void {
    this.totals.offered++;
    this.window.offered++;
  }

  /** An attempt was written to a socket. */
  attempt(retry: boolean): void {
    this.totals.attempts++;
    this.window.attempts++;
    if (retry) {
      this.totals.retries++;
      this.window.retries++;
    }
  }

  /** An attempt ended (the server's view: every attempt counts). */
  attemptEnded(outcome: Outcome): void {
    this.attemptOutcomes[outcome]++;
  }

  /** A request ended for good. `latencyMs` is from its intended send time. */
  finished(end: {
    readonly outcome: Outcome;
    readonly latencyMs: number;
    readonly good: boolean;
    readonly status: number;
    readonly retryAfterMs: number | undefined;
    readonly reason: string;
    readonly fromSendMs: number;
  }): void {
    const { outcome } = end;
    this.totals[outcome]++;
    this.window[outcome]++;
    if (end.good) {
      this.totals.good++;
      this.window.good++;
    }
    if (outcome === 'dropped') {
      bump(this.droppedByReason, end.reason, maxReasons);
      return;
    }
    recordMs((this.latency[outcome] ??= latencyHistogram()), end.latencyMs);
    if (outcome === 'ok') {
      recordMs((this.#okFromSend ??= latencyHistogram()), end.fromSendMs);
    } else if (outcome === 'rejected') {
      bump(this.rejectedByStatus, String(end.status), maxReasons);
      if (end.retryAfterMs === undefined) this.rejectedWithoutRetryAfter++;
      else recordMs((this.#retryAfter ??= latencyHistogram()), end.retryAfterMs);
    } else if (outcome === 'error') {
      bump(this.errorsByStatus, String(end.status), maxReasons);
    } else if (outcome === 'network') {
      bump(this.networkByReason, end.reason, maxReasons);
    }
  }

  /** Closes the current step of the window: its counts. */
  closeStep(): WindowCounts {
    const step = emptyCounts();
    for (const key of Object.keys(step) as (keyof WindowCounts)[]) {
      step[key] = this.window[key] - this.#stepStart[key];
    }
    Object.assign(this.#stepStart, this.window);
    return step;
  }

  /** Closes the current window; keeps it when `keep`. */
  closeWindow(keep: boolean): void {
    if (keep) this.windows.push({ ...this.window });
    Object.assign(this.window, emptyCounts());
    Object.assign(this.#stepStart, this.window);
  }

  /** The group's statistics; rates are per second of `durationMs`. */
  stats(durationMs: number): GroupStats {
    return buildStats({
      name: this.name,
      ratePerSec: this.ratePerSec,
      durationMs,
      recorders: [this],
      windows: this.windows,
    });
  }

  /** @internal */
  get okFromSend(): RecordableHistogram | undefined {
    return this.#okFromSend;
  }

  /** @internal */
  get retryAfter(): RecordableHistogram | undefined {
    return this.#retryAfter;
  }
}

/** Statistics over several groups (one group, or all of them for the totals). */
export function buildStats(input: {
  readonly name: string;
  readonly ratePerSec: number;
  readonly durationMs: number;
  readonly recorders: readonly GroupRecorder[];
  readonly windows: readonly WindowCounts[];
}): GroupStats {
  const { recorders } = input;
  const counts = emptyCounts();
  const attemptOutcomes = emptyOutcomes();
  let rejectedWithoutRetryAfter = 0;
  for (const r of recorders) {
    for (const key of Object.keys(counts) as (keyof WindowCounts)[]) counts[key] += r.totals[key];
    for (const o of outcomes) attemptOutcomes[o] += r.attemptOutcomes[o];
    rejectedWithoutRetryAfter += r.rejectedWithoutRetryAfter;
  }
  const merge = (
    pick: (r: GroupRecorder) => RecordableHistogram | undefined,
  ): LatencySummary | undefined => {
    const present = recorders.map(pick).filter((h) => h !== undefined);
    if (present.length === 0) return undefined;
    return summarise(present.length === 1 ? present[0]! : mergeHistograms(present));
  };
  const latencyMs: Partial<Record<Timed, LatencySummary>> = {};
  for (const o of outcomes) {
    if (o === 'dropped') continue;
    const s = merge((r) => r.latency[o]);
    if (s !== undefined) latencyMs[o] = s;
  }
  const sumMaps = (pick: (r: GroupRecorder) => Map<string, number>): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const r of recorders) for (const [k, v] of pick(r)) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const perSec = (n: number): number => Math.round((n / (input.durationMs / 1000)) * 100) / 100;
  return {
    name: input.name,
    ratePerSec: input.ratePerSec,
    ...counts,
    sent: counts.offered - counts.dropped,
    offeredPerSec: perSec(counts.offered),
    okPerSec: perSec(counts.ok),
    goodputPerSec: perSec(counts.good),
    latencyMs,
    okFromSendMs: merge((r) => r.okFromSend),
    rejectedByStatus: sumMaps((r) => r.rejectedByStatus),
    errorsByStatus: sumMaps((r) => r.errorsByStatus),
    networkByReason: sumMaps((r) => r.networkByReason),
    droppedByReason: sumMaps((r) => r.droppedByReason),
    retryAfterMs: merge((r) => r.retryAfter),
    rejectedWithoutRetryAfter,
    attemptOutcomes: attemptOutcomes,
    windows: input.windows,
  };
}
