import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../load/index.js';
import type { DecisionWindow } from '../serve/decision-trace.js';
import { decisionPanels, windowsOfRun } from './decision-panels.js';

const startMs = Date.parse('2026-01-01T00:00:00.000Z');
/** A run that started at `startMs` and had its last answer 1 s later. */
const result = { startedAt: new Date(startMs).toISOString(), elapsedMs: 1_000 } as LoadResult;

function win(at: number, w: Partial<DecisionWindow>): DecisionWindow {
  return {
    startMs: startMs + at,
    durationMs: 250,
    admitted: 0,
    refused: {},
    abandoned: 0,
    peakInFlight: 0,
    peakQueued: 0,
    limit: 10,
    waited: 0,
    waitSumMs: 0,
    waitMaxMs: 0,
    ...w,
  };
}

describe('the demo’s decision panels', () => {
  it('keeps the windows whose middle falls within the run', () => {
    const windows = [-250, -100, 0, 250, 500, 750, 900, 1_000].map((at) => win(at, {}));
    expect(windowsOfRun(windows, result).map((w) => w.startMs - startMs)).toEqual([
      -100, 0, 250, 500, 750,
    ]);
  });

  it('draws decisions per second by result, in flight against the limit, and time in line', () => {
    const windows = [
      win(0, { admitted: 80, refused: { quota: 5 }, peakInFlight: 10, peakQueued: 4 }),
      win(250, {
        admitted: 82,
        refused: { capacity: 20, quota: 1 },
        abandoned: 1,
        peakInFlight: 10,
        peakQueued: 10,
        limit: 12,
        waited: 4,
        waitSumMs: 100,
        waitMaxMs: 50,
      }),
    ];
    const [decided, inFlight, line] = decisionPanels(windows, result);
    expect(decided!.t).toEqual([0.25, 0.5]);
    expect(decided!.unit).toBe('per-second');
    expect(decided!.series.map((s) => [s.label, s.values, s.whole])).toEqual([
      ['admitted', [320, 328], '324.0/s'],
      ['refused: quota', [20, 4], '12.0/s'],
      ['refused: capacity', [0, 80], '40.0/s'],
      ['abandoned', [0, 4], '2.0/s'],
    ]);
    expect(inFlight!.series.map((s) => [s.label, s.values, s.whole, s.dashed === true])).toEqual([
      ['in line', [4, 10], 'max 10', false],
      ['in flight', [10, 10], 'max 10', false],
      ['limit', [10, 12], '10–12', true],
    ]);
    // Nobody left the line in the first window: a gap, not a zero wait.
    expect(line!.unit).toBe('ms');
    expect(line!.series.map((s) => [s.label, s.values])).toEqual([
      ['max', [null, 50]],
      ['mean', [null, 25]],
    ]);
    expect(line!.series[1]!.whole).toBe('25.0 ms');
  });

  it('draws nothing for a run without windows', () => {
    expect(decisionPanels([], result)).toEqual([]);
  });
});
