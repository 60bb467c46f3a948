/**
 * The broker scenario in text: one row per way of running (what the producer offered, what it
 * was refused, what the consumer made of it, how old messages were and how far the lag went),
 * then the run second by second side by side, then the checks; and the same as JSON.
 *
 * @module
 */
import { alignColumns, formatMs } from '../../../load/format-table.js';
import { percentileMs } from '../../../load/latency-histogram.js';
import { targetLine, type Target } from '../records.js';
import type { ModeRecord } from './figures.js';
import { capacityPerSec, lifeMs, maxLag, offeredPerSec, type BrokerName } from './settings.js';

const n = (x: number | null): string => (x === null ? '–' : x.toLocaleString('en-US'));
const rate = (x: number): string => x.toFixed(0);

/** The heading line of a run against `broker`. */
export function brokerTitle(broker: BrokerName, where: string, durationMs: number): string {
  return (
    `broker (${broker}, ${where}): ${offeredPerSec.toLocaleString('en-US')} messages/s offered for ${durationMs / 1_000} s ` +
    `to a consumer of ${capacityPerSec.toFixed(0)}/s (10 slots × 30 ms, 15 messages taken at once); a message's life is ${lifeMs / 1_000} s`
  );
}

/** The table, the seconds and the checks. */
export function formatBrokerSummary(
  records: readonly ModeRecord[],
  targets: readonly Target[],
  title: string,
): string {
  const rows: string[][] = [
    [
      'way',
      'offered',
      'admitted',
      "refused 'later'",
      'processed',
      'useful',
      'useful/s',
      '× capacity',
      'age p50',
      'age p99',
      'age max',
      'max lag',
      'expired',
      'left',
    ],
  ];
  for (const { figures: f, result } of records) {
    rows.push([
      `${f.mode}${result.validity.valid ? '' : ' (!)'}`,
      n(f.offered),
      n(f.admitted),
      n(f.refused),
      n(f.processed),
      n(f.useful),
      rate(f.usefulPerSec),
      f.usefulOfCapacity.toFixed(2),
      formatMs(f.ageP50Ms),
      formatMs(f.ageP99Ms),
      formatMs(f.ageMaxMs),
      n(f.maxLag),
      n(f.expired),
      n(f.left),
    ]);
  }
  const out = ['', title, alignColumns(rows), '', 'Second by second:', secondsTable(records)];
  const invalid = records.filter((r) => !r.result.validity.valid);
  if (invalid.length > 0) {
    out.push('', '(!) not valid:');
    for (const r of invalid)
      out.push(`  ${r.figures.mode}: ${r.result.validity.reasons.join('; ')}`);
  }
  out.push(
    '',
    `useful: processed within the message's ${lifeMs / 1_000} s life; age: from when it was due to when it was processed; ` +
      `lag: messages the broker held for the consumer (waiting + unacknowledged), sampled every 250 ms; ` +
      `expired: dropped by the broker's TTL; left: still in the broker at the end. The gate's maxLag is ${maxLag}.`,
    '',
    'Targets:',
  );
  for (const t of targets) out.push(`  ${targetLine(t)}`);
  return out.join('\n');
}

/** Per second: lag, age p50 and useful/s of every way, with the gate's admits and refusals. */
function secondsTable(records: readonly ModeRecord[]): string {
  const head: string[] = ['s'];
  const sub: string[] = [''];
  for (const r of records) {
    const cols = ['lag', 'age p50', 'useful/s'];
    if (r.figures.mode === 'lag-gate') cols.splice(2, 0, 'admitted/s', 'refused/s');
    if (r.figures.mode === 'ttl') cols.splice(2, 0, 'expired/s');
    head.push('│', r.figures.mode, ...cols.slice(1).map(() => ''));
    sub.push('│', ...cols);
  }
  const rows = [head, sub];
  const seconds = Math.max(...records.map((r) => r.result.windows.length));
  for (let i = 0; i < seconds; i++) {
    const row = [String(i + 1)];
    for (const r of records) {
      const w = r.result.windows[i];
      const lagIn = r.run.recorder.lag.filter(
        (s) => s.atMs >= i * 1_000 && s.atMs < (i + 1) * 1_000,
      );
      const lag = lagIn.length === 0 ? null : Math.max(...lagIn.map((s) => s.messages));
      const perSec = (x: number | undefined): string =>
        w === undefined || x === undefined ? '' : rate((x * 1_000) / w.durationMs);
      row.push('│', n(lag), formatMs(w?.okP50Ms ?? null));
      if (r.figures.mode === 'lag-gate') row.push(perSec(w?.attempts), perSec(w?.rejected));
      if (r.figures.mode === 'ttl') row.push(perSec(w?.timeout));
      row.push(perSec(w?.good));
    }
    rows.push(row);
  }
  return alignColumns(rows);
}

/** The run as JSON. */
export function brokerJson(
  broker: BrokerName,
  records: readonly ModeRecord[],
  targets: readonly Target[],
) {
  return {
    scenario: 'broker',
    broker,
    capacityPerSec,
    offeredPerSec,
    lifeMs,
    maxLag,
    machine: records[0]?.result.machine ?? null,
    runs: records.map((r) => ({
      ...r.figures,
      where: r.run.where,
      valid: r.result.validity.valid,
      invalidReasons: r.result.validity.reasons,
      inFlightAtReading: r.run.inFlightAtReading ?? null,
      maxOutstanding: r.run.maxOutstanding ?? null,
      producerCpuPercent: r.result.validity.cpuPercent,
      scheduleLagP99Ms: r.result.validity.scheduleLagMs.p99,
      serviceLateP99Ms: percentileMs(r.run.recorder.serviceLate, 99),
      readings: r.run.readings ?? null,
      lagAtEnd: r.run.lagAtEnd ?? null,
      seconds: r.result.windows.map((w) => ({
        offered: w.offered,
        admitted: w.attempts,
        refused: w.rejected,
        processed: w.ok,
        useful: w.good,
        expired: w.timeout,
        ageP50Ms: w.okP50Ms,
        ageP99Ms: w.okP99Ms,
      })),
      lag: r.run.recorder.lag,
    })),
    targets,
  };
}
