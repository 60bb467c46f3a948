import { describe, expect, it } from 'vitest';
import type { GroupStats, LoadResult } from '../../load/index.js';
import {
  capacityPerSec,
  exitCodeOf,
  targetLine,
  type RunRecord,
  type ServerName,
} from './records.js';
import { scenarios } from './scenarios.js';
import { checkTargets, invalidNote } from './summary.js';

const [reference, , tenX] = scenarios({ quick: false });

/** A run of `server` in `scenario` with the figures the checks read; the rest left out. */
function run(
  scenario: NonNullable<typeof reference>,
  server: ServerName,
  figures: {
    goodput: number;
    okP99?: number;
    refusalP99?: number;
    valid?: boolean;
    reasons?: string[];
  },
): RunRecord {
  const group = {
    name: 'clients',
    sent: 2_500,
    ok: 1_650,
    goodputPerSec: figures.goodput * capacityPerSec,
    latencyMs: {
      ok: { p50: 40, p99: figures.okP99 ?? 60 },
      ...(figures.refusalP99 === undefined ? {} : { rejected: { p99: figures.refusalP99 } }),
    },
  } as unknown as GroupStats;
  const result = {
    groups: [group],
    totals: group,
    validity: { valid: figures.valid ?? true, reasons: figures.reasons ?? [] },
    windows: [],
  } as unknown as LoadResult;
  return {
    scenario,
    server,
    result,
    next: { ms: 33, outcome: 'ok' },
    unloadedMs: 32,
    idleRssBytes: 60 * 2 ** 20,
    peakRssBytes: 70 * 2 ** 20,
  };
}

describe('the demo checks what it prints', () => {
  it('judges goodput against the bulkhead of the same run, at the printed precision', () => {
    // The miss the issue saw: G 0.9894 printed as 0.99 next to a ✗. Now it is printed as 0.989
    // and checked against 0.98 × the bulkhead's, the design's 0.99 of capacity beside it.
    const targets = checkTargets([
      run(reference!, 'bulkhead', { goodput: 0.9985 }),
      run(reference!, 'bounded', { goodput: 0.9894 }),
    ]);
    const held = targets.find((t) => t.name === 'Spillway holds at the reference load')!;
    expect(held.pass).toBe(true);
    expect(held.detail).toContain('G 0.989');
    expect(held.detail).toContain("0.98 × the bulkhead's 0.999 = 0.979");
    expect(held.detail).toContain('target 0.990 of capacity missed');
    expect(targetLine(held)).toMatch(/^✓ /);
    expect(exitCodeOf(targets)).toBe(0);
  });

  it('a real miss is a ✗ and exit code 1', () => {
    const targets = checkTargets([
      run(reference!, 'bulkhead', { goodput: 1.0 }),
      run(reference!, 'bounded', { goodput: 0.975 }),
    ]);
    const held = targets.find((t) => t.name === 'Spillway holds at the reference load')!;
    expect(held.pass).toBe(false);
    expect(targetLine(held)).toMatch(/^✗ /);
    expect(exitCodeOf(targets)).toBe(1);
  });

  it('without a bulkhead, holds goodput to 0.99 of capacity', () => {
    const [held] = checkTargets([run(reference!, 'bounded', { goodput: 0.9894 })]);
    expect(held!.pass).toBe(false);
    expect(held!.detail).toContain('G 0.989 (≥ 0.990)');
  });

  it('compares a latency as formatMs prints it', () => {
    const pass = checkTargets([run(tenX!, 'bounded', { goodput: 1, refusalP99: 5.004 })])[0]!;
    expect(pass.detail).toContain('refusal p99 5.00 ms (≤ 5 ms)');
    expect(pass.pass).toBe(true);
    const miss = checkTargets([run(tenX!, 'bounded', { goodput: 1, refusalP99: 5.2 })])[0]!;
    expect(miss.detail).toContain('refusal p99 5.20 ms (≤ 5 ms)');
    expect(miss.pass).toBe(false);
  });

  it("judges the refusal p99 against twice the bulkhead's where that is above 5 ms", () => {
    const check = (mine: number, theirs: number) =>
      checkTargets([
        run(tenX!, 'bulkhead', { goodput: 1, refusalP99: theirs }),
        run(tenX!, 'bounded', { goodput: 1, refusalP99: mine }),
      ]).find((t) => t.name === 'Spillway holds at 10× capacity')!;
    const near = check(7.04, 3.6);
    expect(near.pass).toBe(true);
    expect(near.detail).toContain(
      "refusal p99 7.04 ms (≤ 2 × the bulkhead's 3.60 ms = 7.20 ms; target 5 ms missed)",
    );
    expect(check(7.3, 3.6).pass).toBe(false);
    // A bulkhead under 2.5 ms leaves the design's line in force.
    const quiet = check(5.2, 2.0);
    expect(quiet.pass).toBe(false);
    expect(quiet.detail).toContain('refusal p99 5.20 ms (≤ 5 ms)');
  });

  it('a miss on a run that was not valid is shown unjudged, and does not fail the exit code', () => {
    const targets = checkTargets([
      run(tenX!, 'bounded', { goodput: 0.8, refusalP99: 17, valid: false }),
    ]);
    expect(targets[0]!.judged).toBe(false);
    expect(targetLine(targets[0]!)).toMatch(/^\? .*not judged/);
    expect(exitCodeOf(targets)).toBe(0);
  });

  it("names each run that was not valid with the generator's own reason", () => {
    const reason =
      'schedule lag p99 9.1 ms > 5 ms: the generator fell behind its schedule in bursts of its own work';
    const records = [
      run(tenX!, 'naive', { goodput: 0.2, valid: false, reasons: [reason] }),
      run(tenX!, 'bounded', { goodput: 0.99, refusalP99: 4 }),
    ];
    expect(invalidNote(records)).toEqual([
      '',
      '(!) not valid — read those rows with care:',
      `    10x naive: ${reason}`,
    ]);
    expect(invalidNote(records.slice(1))).toEqual([]);
  });
});
