/**
 * The demo's verdicts: the table per scenario, the targets checked against what was
 * measured, and the JSON for machines.
 *
 * @module
 */
import { alignColumns, formatMs } from '../../load/index.js';
import {
  capacityPerSec,
  goodputFraction,
  mb,
  nextRequestText,
  rejectionP99,
  type RunRecord,
  type ServerName,
  type Target,
} from './records.js';

export function formatSummary(records: readonly RunRecord[], targets: readonly Target[]): string {
  const out: string[] = [];
  for (const id of [...new Set(records.map((r) => r.scenario.id))]) {
    const runs = records.filter((r) => r.scenario.id === id);
    out.push('', `${id}: ${runs[0]!.scenario.title}`);
    const rows: string[][] = [
      [
        'server',
        'group',
        'sent',
        'ok',
        'G',
        'ok p50',
        'ok p99',
        '429',
        '503',
        'timeouts',
        'refusal p99',
        'peak RSS',
        'next request',
      ],
    ];
    for (const r of runs) {
      const groups = r.result.groups;
      for (const [i, g] of groups.entries()) {
        rows.push([
          i === 0 ? `${r.server}${r.result.validity.valid ? '' : ' (!)'}` : '',
          g.name,
          String(g.sent),
          String(g.ok),
          (g.goodputPerSec / capacityPerSec).toFixed(2),
          formatMs(g.latencyMs.ok?.p50),
          formatMs(g.latencyMs.ok?.p99),
          String(g.rejectedByStatus['429'] ?? 0),
          String(g.rejectedByStatus['503'] ?? 0),
          String(g.timeout),
          formatMs(rejectionP99(g)),
          i === 0 ? mb(r.peakRssBytes) : '',
          i === 0 ? nextRequestText(r.next) : '',
        ]);
      }
    }
    out.push(alignColumns(rows));
  }
  if (records.some((r) => !r.result.validity.valid)) {
    out.push(
      '',
      '(!) not valid: the generator fell behind its schedule or the machine was busy; read those rows with care.',
    );
  }
  out.push('', 'Targets:');
  for (const t of targets) out.push(`  ${t.pass ? '✓' : '✗'} ${t.name}: ${t.detail}`);
  return out.join('\n');
}

/** The targets, checked against what was measured. */
export function checkTargets(records: readonly RunRecord[]): Target[] {
  const find = (scenario: string, server: ServerName) =>
    records.find((r) => r.scenario.id === scenario && r.server === server);
  const targets: Target[] = [];
  const naive = find('reference', 'naive');
  if (naive !== undefined) {
    const g = goodputFraction(naive.result);
    const next = naive.next;
    targets.push({
      name: 'naive collapses at the reference load',
      pass: g < 0.6 && (next?.ms ?? 0) > 1_000,
      detail: `G ${g.toFixed(2)} (< 0.6 expected), next request ${nextRequestText(naive.next)} (> 1 s expected)`,
    });
  }
  const ref = find('reference', 'bounded');
  if (ref !== undefined) {
    const g = goodputFraction(ref.result);
    const p99 = ref.result.groups[0]!.latencyMs.ok?.p99 ?? Infinity;
    const next = ref.next;
    const nextOk = next?.outcome === 'ok' && (next.ms ?? Infinity) <= 2 * ref.unloadedMs;
    targets.push({
      name: 'Spillway holds at the reference load',
      pass: g >= 0.99 && p99 <= 80 && nextOk,
      detail: `G ${g.toFixed(2)} (≥ 0.99), ok p99 ${formatMs(p99)} (≤ 80 ms), next request ${nextRequestText(ref.next)} (≤ 2 × unloaded ${formatMs(ref.unloadedMs)})`,
    });
  }
  const greedy = find('greedy', 'bounded');
  if (greedy !== undefined) {
    const polite = greedy.result.groups.find((g) => g.name === 'polite');
    const hog = greedy.result.groups.find((g) => g.name === 'greedy');
    if (polite !== undefined && hog !== undefined) {
      const share = polite.sent > 0 ? polite.ok / polite.sent : 0;
      const seconds = greedy.scenario.durationMs / 1000;
      const quota = 150 * seconds + 15;
      targets.push({
        name: 'well-behaved clients get through while the greedy one is held to its quota',
        pass: share >= 0.99 && hog.ok <= quota * 1.02,
        detail: `polite ok ${(share * 100).toFixed(1)} % (≥ 99 %), greedy ok ${hog.ok} of ${hog.sent} (quota ${Math.round(quota)})`,
      });
    }
  }
  const tenX = find('10x', 'bounded');
  if (tenX !== undefined) {
    const g = goodputFraction(tenX.result);
    const main = tenX.result.groups[0]!;
    const p99 = main.latencyMs.ok?.p99 ?? Infinity;
    const refusal = rejectionP99(main) ?? Infinity;
    const growth = tenX.peakRssBytes - tenX.idleRssBytes;
    targets.push({
      name: 'Spillway holds at 10× capacity',
      pass: g >= 0.99 && p99 <= 80 && refusal <= 5 && growth <= 64 * 1_048_576,
      detail: `G ${g.toFixed(2)} (≥ 0.99), ok p99 ${formatMs(p99)} (≤ 80 ms), refusal p99 ${formatMs(refusal)} (≤ 5 ms), RSS +${mb(growth)} over idle (≤ 64 MB)`,
    });
  }
  return targets;
}

export function toJson(
  records: readonly RunRecord[],
  targets: readonly Target[],
  setup: { readonly quick: boolean; readonly framework: string; readonly pinned: boolean },
) {
  return {
    ...setup,
    capacityPerSec,
    machine: records[0]?.result.machine ?? null,
    runs: records.map((r) => ({
      scenario: r.scenario.id,
      server: r.server,
      valid: r.result.validity.valid,
      invalidReasons: r.result.validity.reasons,
      goodput: goodputFraction(r.result),
      unloadedMs: r.unloadedMs,
      idleRssBytes: r.idleRssBytes,
      peakRssBytes: r.peakRssBytes,
      nextRequest: r.next ?? null,
      groups: r.result.groups.map((g) => ({
        name: g.name,
        sent: g.sent,
        ok: g.ok,
        goodput: g.goodputPerSec / capacityPerSec,
        okP50Ms: g.latencyMs.ok?.p50 ?? null,
        okP99Ms: g.latencyMs.ok?.p99 ?? null,
        rejectedByStatus: g.rejectedByStatus,
        timeouts: g.timeout,
        errors: g.error,
        network: g.network,
        dropped: g.dropped,
        rejectionP99Ms: rejectionP99(g) ?? null,
      })),
    })),
    targets,
  };
}
