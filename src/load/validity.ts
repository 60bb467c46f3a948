/**
 * Whether a run can be quoted (BENCHMARKS.md rule 5): a generator that fell behind its
 * schedule, ran out of CPU or dropped requests measured itself, not the server.
 *
 * @module
 */
import type { Validity } from './result.js';

/** The measurements {@link assessValidity} judges. */
export interface ValidityInput {
  readonly scheduleLagMs: Validity['scheduleLagMs'];
  readonly cpuPercent: number;
  readonly offered: number;
  readonly dropped: number;
  /** Dropped arrivals by reason (`connection cap`, `connect rate`, …), to say why. */
  readonly droppedByReason?: Readonly<Record<string, number>>;
  readonly thresholds: Validity['thresholds'];
}

/** What each drop reason means, in words. */
const dropMeaning: Readonly<Record<string, string>> = {
  'connection cap': 'every connection busy at the connection cap',
  'connect rate': 'no idle connection and the new-connection budget spent',
  'in-flight cap': 'the in-flight cap reached',
  'deadline passed': 'its deadline passed before it could be sent',
};

const fmt = (n: number, digits = 1): string => n.toFixed(digits);

/** Judges a run against its thresholds; every failed check becomes a reason in words. */
export function assessValidity(input: ValidityInput): Validity {
  const { thresholds: t } = input;
  const reasons: string[] = [];
  const droppedFraction = input.offered === 0 ? 0 : input.dropped / input.offered;
  if (input.scheduleLagMs.p99 > t.maxLagP99Ms) {
    // Late but not busy: the process was waiting for a CPU, so something else had it.
    const starved =
      input.cpuPercent < 50 ? ' while using little CPU itself (the machine was busy)' : '';
    reasons.push(
      `schedule lag p99 ${fmt(input.scheduleLagMs.p99)} ms > ${t.maxLagP99Ms} ms: the generator fell behind its schedule${starved}`,
    );
  }
  if (input.cpuPercent > t.maxCpuPercent) {
    reasons.push(
      `generator CPU ${fmt(input.cpuPercent, 0)} % > ${t.maxCpuPercent} %: the generator may be the bottleneck`,
    );
  }
  if (droppedFraction > t.maxDroppedFraction) {
    const byReason = Object.entries(input.droppedByReason ?? {}).sort((a, b) => b[1] - a[1]);
    const why =
      byReason.length === 0
        ? 'the connection or in-flight cap was reached, the new-connection budget was spent, or a deadline passed before sending'
        : byReason.map(([k, n]) => `${n} ${k} (${dropMeaning[k] ?? k})`).join(', ');
    reasons.push(
      `${input.dropped} of ${input.offered} requests dropped (${fmt(droppedFraction * 100, 2)} %): ${why}`,
    );
  }
  return {
    valid: reasons.length === 0,
    reasons,
    scheduleLagMs: input.scheduleLagMs,
    cpuPercent: Math.round(input.cpuPercent * 10) / 10,
    dropped: input.dropped,
    droppedFraction,
    thresholds: t,
  };
}
