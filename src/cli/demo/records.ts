/**
 * What the demo records per run, and the small measures every part of it shares.
 *
 * @module
 */
import { formatMs, type GroupStats, type LoadResult } from '../../load/index.js';
import type { DecisionWindow } from '../serve/decision-trace.js';
import { slotsSetup, type Scenario } from './scenarios.js';

/** Capacity of the reference setup: 10 connections / 30 ms. */
export const capacityPerSec = 10 / 0.03;

export type ServerName =
  'naive' | 'bulkhead' | 'bounded' | 'shares' | 'fixed-10' | 'fixed-50' | 'adaptive';

/**
 * The `spillway serve` arguments of each server the demo runs. Spillway's node servers trace
 * their decisions (`--decisions`) for the report's panel.
 */
export function serverArgs(name: ServerName, framework: string): string[] {
  switch (name) {
    case 'bulkhead':
      return ['bulkhead'];
    case 'fixed-10':
      return ['bounded', '--limit', '10', '--decisions'];
    case 'fixed-50':
      return ['bounded', '--limit', '50', '--decisions'];
    case 'adaptive':
      return ['bounded', '--limit', 'adaptive', '--decisions'];
    case 'shares':
      return [...serverArgs('bounded', framework), '--tenant-share', String(slotsSetup.maxShare)];
    default:
      return [
        name,
        '--framework',
        framework,
        ...(name === 'bounded' && framework === 'node' ? ['--decisions'] : []),
      ];
  }
}

/** How the request sent after the rush fared. */
export interface NextRequest {
  /** Its latency (for `timeout`, how long it waited before giving up). */
  readonly ms: number | null;
  readonly outcome: string;
  /** For `timeout`: the server's work still queued when it gave up, in ms at capacity. */
  readonly queuedMs?: number;
}

export interface RunRecord {
  readonly scenario: Scenario;
  readonly server: ServerName;
  readonly result: LoadResult;
  readonly next: NextRequest | undefined;
  /** The route's limit every 500 ms (slowdown scenario only). */
  readonly limitTrace?: readonly number[];
  /**
   * The most slots the slots scenario's holder had at once, by the server's count of its slow
   * queries running at once (servers started with `--slow-ms`).
   */
  readonly holderPeakSlots?: number;
  /** The server's decision windows over the run (servers started with `--decisions`). */
  readonly decisions?: readonly DecisionWindow[];
  readonly unloadedMs: number;
  readonly idleRssBytes: number;
  readonly peakRssBytes: number;
}

/** A target of the demo, checked against what was measured. */
export interface Target {
  readonly name: string;
  readonly pass: boolean;
  /**
   * False when a run the check rests on was not valid (the generator fell behind or the
   * machine was busy): a miss there is shown as unjudged, not as a failure of the server.
   */
  readonly judged: boolean;
  readonly detail: string;
}

/** `✓`, `✗`, or `?` for a miss on a run that was not valid. */
export function targetLine(t: Target): string {
  if (t.pass) return `✓ ${t.name}: ${t.detail}`;
  if (t.judged) return `✗ ${t.name}: ${t.detail}`;
  return `? ${t.name}: ${t.detail} — not judged: a run it rests on was not valid (a busy machine)`;
}

/** The demo's exit code: 1 when a target was missed on valid runs, else 0. */
export function exitCodeOf(targets: readonly Target[]): number {
  return targets.some((t) => !t.pass && t.judged) ? 1 : 0;
}

/**
 * A latency as the tables print it (`formatMs`), as a number: the checks compare what they
 * print, so a target never reads `5.00 ms (≤ 5 ms)` next to a ✗.
 */
export function shownMs(ms: number | undefined): number {
  if (ms === undefined || !Number.isFinite(ms)) return Infinity;
  return Number(formatMs(ms).replace(/[^0-9.]/g, ''));
}

/** A fraction rounded to the three places the checks print it with. */
export function shown3(fraction: number): number {
  return Math.round(fraction * 1_000) / 1_000;
}

export function sum(groups: readonly GroupStats[], f: (g: GroupStats) => number): number {
  return groups.reduce((total, g) => total + f(g), 0);
}

/** Goodput of the run ÷ capacity. */
export function goodputFraction(result: LoadResult): number {
  return result.totals.goodputPerSec / capacityPerSec;
}

export function probeOutcome(result: LoadResult): NextRequest {
  const g = result.totals;
  const outcome =
    (['ok', 'rejected', 'error', 'timeout', 'network'] as const).find((o) => g[o] > 0) ?? 'dropped';
  const summary = outcome === 'dropped' ? undefined : g.latencyMs[outcome];
  return { ms: summary?.max ?? null, outcome };
}

export function nextRequestText(n: NextRequest | undefined): string {
  if (n === undefined) return '—';
  if (n.outcome === 'timeout') {
    const queued =
      n.queuedMs === undefined
        ? ''
        : `; the server still had ${seconds(n.queuedMs)} of work queued`;
    return `> ${formatMs(n.ms)} (gave up${queued})`;
  }
  return n.outcome === 'ok' ? formatMs(n.ms) : `${formatMs(n.ms)} (${n.outcome})`;
}

const seconds = (ms: number): string =>
  `${(ms / 1_000).toLocaleString('en-US', { maximumFractionDigits: ms < 10_000 ? 1 : 0 })} s`;

export const mb = (bytes: number): string => `${Math.round(bytes / 1_048_576)} MB`;

export function rejectionP99(g: GroupStats): number | undefined {
  return g.latencyMs.rejected?.p99;
}
