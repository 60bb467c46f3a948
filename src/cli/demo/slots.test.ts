import { describe, expect, it } from 'vitest';
import type { GroupStats, LoadResult } from '../../load/index.js';
import { exitCodeOf, targetLine, type RunRecord, type ServerName } from './records.js';
import { scenarios } from './scenarios.js';
import { addHolderColumn, holderShareSlots, slotsTarget } from './slots.js';
import { checkTargets, formatSummary } from './summary.js';

const slots = scenarios({ quick: true }).find((s) => s.id === 'slots')!;

/** A slots run of `server`: the holder's and the polite clients' counts, and its peak. */
function run(
  server: ServerName,
  figures: { politeOk: number; holderOk?: number; peak?: number; valid?: boolean },
): RunRecord {
  const group = (name: string, sent: number, ok: number) =>
    ({
      name,
      sent,
      ok,
      goodputPerSec: 0,
      latencyMs: {},
      rejectedByStatus: { '503': sent - ok },
      timeout: 0,
    }) as unknown as GroupStats;
  const groups = [
    group('holder', 80, figures.holderOk ?? 12),
    group('polite', 200, figures.politeOk),
  ];
  const result = {
    groups,
    totals: groups[1],
    validity: { valid: figures.valid ?? true, reasons: [] },
    windows: [],
  } as unknown as LoadResult;
  return {
    scenario: slots,
    server,
    result,
    next: undefined,
    ...(figures.peak === undefined ? {} : { holderPeakSlots: figures.peak }),
    unloadedMs: 32,
    idleRssBytes: 60 * 2 ** 20,
    peakRssBytes: 70 * 2 ** 20,
  };
}

describe('the slots scenario', () => {
  it('passes when the polite clients keep 99 % and the holder stays within its share', () => {
    expect(holderShareSlots).toBe(3);
    const target = slotsTarget([
      run('bulkhead', { politeOk: 82, peak: 10 }),
      run('bounded', { politeOk: 66, peak: 10 }),
      run('shares', { politeOk: 199, peak: 3 }),
    ])!;
    expect(target.pass).toBe(true);
    expect(target.detail).toContain('polite ok 99.5 % (≥ 99 %), holder at most 3 slots at once');
    expect(target.detail).toContain(
      'without shares, polite ok: bulkhead 41.0 % (holder at 10 slots), bounded 33.0 % (holder at 10 slots)',
    );
  });

  it('fails when the polite clients lose more than 1 %, or the holder holds more than its share', () => {
    const polite = slotsTarget([run('shares', { politeOk: 197, peak: 3 })])!;
    expect(polite.pass).toBe(false);
    expect(polite.detail).toContain('polite ok 98.5 %');
    expect(targetLine(polite)).toMatch(/^✗ /);
    expect(slotsTarget([run('shares', { politeOk: 200, peak: 4 })])!.pass).toBe(false);
    // A server that did not report its count has not shown the holder within its share.
    expect(slotsTarget([run('shares', { politeOk: 200 })])!.pass).toBe(false);
  });

  it('is judged on the shares run alone; without it there is nothing to judge', () => {
    expect(slotsTarget([run('bounded', { politeOk: 66, peak: 10 })])).toBeUndefined();
    const busy = checkTargets([run('shares', { politeOk: 190, peak: 3, valid: false })]);
    expect(busy.map((t) => t.judged)).toEqual([false]);
    expect(exitCodeOf(busy)).toBe(0);
  });

  it("puts the holder's peak on the first row of each run", () => {
    const rows = [
      ['server', 'group'],
      ['bounded', 'holder'],
      ['', 'polite'],
    ];
    addHolderColumn(rows, [run('bounded', { politeOk: 66, peak: 10 })]);
    expect(rows).toEqual([
      ['server', 'group', 'holder slots (peak)'],
      ['bounded', 'holder', '10'],
      ['', 'polite', ''],
    ]);
    const table = formatSummary([run('shares', { politeOk: 200, peak: 3 })], []);
    expect(table).toMatch(/holder slots \(peak\)/);
    expect(table).toMatch(/shares\s+holder\s+80\s+12 .* 3\n/);
  });
});
