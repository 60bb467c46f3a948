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
  /** Idle share of the whole machine's CPU time meanwhile, percent, where known. */
  readonly machineIdlePercent?: number | undefined;
  /** Idle share of the machine in its busiest second, percent, where known. */
  readonly machineLeastIdlePercent?: number | undefined;
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

/**
 * A machine at most this idle (percent of all cores' time) counts as busy: on 2 cores, a quarter
 * idle means the other processes held about a core and a half.
 */
const busyMachineIdlePercent = 25;

/**
 * Why a generator using little CPU fell behind. Late but not busy: either it waited for a CPU
 * something else held (the machine was busy, if only for a second), or its event loop was held
 * up by bursts of its own work — a major garbage collection, thousands of connections opened or
 * destroyed at once — that its average CPU hides. The machine's idle time in its busiest second
 * tells the two apart.
 */
function lateWhy(input: ValidityInput): string {
  if (input.cpuPercent >= 50) return '';
  const idle = input.machineLeastIdlePercent ?? input.machineIdlePercent;
  if (idle === undefined) return ' while using little CPU itself (the machine was busy)';
  if (idle <= busyMachineIdlePercent) {
    return ` while using little CPU itself (the machine was busy: ${fmt(idle, 0)} % idle in its busiest second)`;
  }
  return ` in bursts of its own work while using ${fmt(input.cpuPercent, 0)} % of a core on average, the machine at least ${fmt(idle, 0)} % idle in every second (garbage collection, or many connections opened or closed at once)`;
}

/** Judges a run against its thresholds; every failed check becomes a reason in words. */
export function assessValidity(input: ValidityInput): Validity {
  const { thresholds: t } = input;
  const reasons: string[] = [];
  const droppedFraction = input.offered === 0 ? 0 : input.dropped / input.offered;
  if (input.scheduleLagMs.p99 > t.maxLagP99Ms) {
    reasons.push(
      `schedule lag p99 ${fmt(input.scheduleLagMs.p99)} ms > ${t.maxLagP99Ms} ms: the generator fell behind its schedule${lateWhy(input)}`,
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
    ...(input.machineIdlePercent === undefined
      ? {}
      : { machineIdlePercent: Math.round(input.machineIdlePercent) }),
    ...(input.machineLeastIdlePercent === undefined
      ? {}
      : { machineLeastIdlePercent: Math.round(input.machineLeastIdlePercent) }),
    dropped: input.dropped,
    droppedFraction,
    thresholds: t,
  };
}
