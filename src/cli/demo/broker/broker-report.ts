/**
 * The broker scenario's HTML report: the demo's report page, each way of running a card of its
 * own (useful work, processing and refusals per second, the age of messages when processed),
 * with the broker's lag, the oldest message's age where the broker tells it, and the producer's
 * admissions and refusals as panels beside.
 *
 * @module
 */
import { writeReport } from '../../../load/report/render-report.js';
import type { ReportPanel } from '../../../load/report/report-panel.js';
import type { ReportRun } from '../../../load/report/report-data.js';
import { targetLine, type Target } from '../records.js';
import type { ModeRecord } from './figures.js';
import { capacityPerSec, lifeMs, maxLag, overload, ttlMs, type BrokerName } from './settings.js';

const count = (x: number): string => x.toLocaleString('en-US');

/** The panels of one way's card. */
export function modePanels(r: ModeRecord): ReportPanel[] {
  const samples = r.run.recorder.lag;
  const t = samples.map((s) => Math.round(s.atMs) / 1_000);
  const gated = r.figures.mode === 'lag-gate';
  const panels: ReportPanel[] = [
    {
      title: gated ? "Lag and the gate's bound (messages)" : 'Lag (messages)',
      unit: 'count',
      t,
      series: [
        {
          label: 'lag',
          values: samples.map((s) => s.messages),
          whole: `max ${r.figures.maxLag === null ? '–' : count(r.figures.maxLag)}`,
          fill: true,
        },
        ...(gated
          ? [
              {
                label: 'maxLag',
                values: samples.map(() => maxLag),
                whole: String(maxLag),
                dashed: true,
              },
            ]
          : []),
      ],
      caption:
        'Messages the broker holds for the consumer (waiting and unacknowledged), read from it every 250 ms with the lag source the gate uses.',
    },
  ];
  if (samples.some((s) => s.oldestAgeMs !== undefined)) {
    panels.push({
      title: 'Age of the oldest unfinished message',
      unit: 'ms',
      t,
      series: [
        {
          label: 'oldest',
          values: samples.map((s) => s.oldestAgeMs ?? null),
          whole: `max ${r.figures.maxOldestAgeMs === null ? '–' : `${count(Math.round(r.figures.maxOldestAgeMs))} ms`}`,
        },
        { label: 'life', values: samples.map(() => lifeMs), whole: `${lifeMs} ms`, dashed: true },
      ],
      caption:
        'As the broker tells it (NATS: the message above the ack floor; Redis: the oldest pending entry).',
    });
  }
  const windows = r.result.windows;
  const perSec = (x: number, ms: number): number => Math.round((x * 10_000) / ms) / 10;
  const seconds = r.result.durationMs / 1_000;
  panels.push({
    title: 'Producer: admitted and refused per second',
    unit: 'per-second',
    t: windows.map((w) => (w.startMs + w.durationMs) / 1_000),
    series: [
      {
        label: 'admitted',
        values: windows.map((w) => perSec(w.attempts, w.durationMs)),
        whole: `${(r.figures.admitted / seconds).toFixed(0)}/s`,
      },
      {
        label: "refused ('later')",
        values: windows.map((w) => perSec(w.rejected, w.durationMs)),
        whole: `${(r.figures.refused / seconds).toFixed(0)}/s`,
      },
    ],
  });
  return panels;
}

/** Writes the report to `file`. */
export async function writeBrokerReport(
  file: string,
  o: {
    readonly broker: BrokerName;
    readonly title: string;
    readonly records: readonly ModeRecord[];
    readonly targets: readonly Target[];
  },
): Promise<void> {
  const runs: ReportRun[] = o.records.map((r) => ({
    ...r.result,
    panels: modePanels(r),
    notes: {
      published: count(r.figures.published),
      'expired in the broker': count(r.figures.expired),
      'left in the broker': count(r.figures.left),
      'processed after the run': count(r.figures.processedAfter),
    },
  }));
  await writeReport(file, {
    title: `Spillway demo: a producer ${overload}× faster than its consumer, through ${o.broker}`,
    subtitle: o.title,
    capacityPerSec,
    runs,
    notes: [
      `fire-and-forget: the producer publishes everything and the broker keeps it. lag-gate: the producer asks a lagGate (maxLag ${maxLag}) before each publish and is refused ('later') while the consumer is behind. ttl: no gate, the broker drops messages older than ${ttlMs} ms.`,
      `Read the cards as for HTTP, with messages for requests: offered = messages due; ok = processed; goodput = processed within the message's ${lifeMs / 1_000} s life; rejected = refused by the gate; timed out = expired in the broker; latency = a message's age when processed, from when it was due.`,
      "The consumer's work is like the demo's database: 10 slots × 30 ms, so its capacity is exactly 333 messages/s (it takes 15 messages at once, so the next are in hand when slots free); every way runs against the same consumer, on a stream or queue of its own that is deleted after it.",
      ...o.targets.map(targetLine),
    ],
  });
}
