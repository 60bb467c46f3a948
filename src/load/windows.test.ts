import { describe, expect, it } from 'vitest';
import { resolveOptions } from './options.js';
import { GroupRecorder } from './recorder.js';
import type { LoadProgress, WindowStats } from './result.js';
import { MeasurementWindows } from './windows.js';

function windowsAt(now: () => number, maxWindows = 3600) {
  const options = resolveOptions({
    url: 'http://127.0.0.1:8080/',
    durationMs: 5000,
    maxWindows,
    groups: [
      { name: 'a', ratePerSec: 10 },
      { name: 'b', ratePerSec: 10 },
    ],
  });
  const recorders = options.groups.map((g) => new GroupRecorder(g.name, g.ratePerSec));
  const sweeps: number[] = [];
  const reported: { window: WindowStats; totals: LoadProgress }[] = [];
  const windows = new MeasurementWindows({
    options,
    recorders,
    now,
    gauges: { inFlight: 7, connections: 3, windowClosed: (at) => void sweeps.push(at) },
    onBoundary: () => undefined,
    onWindow: (event) => void reported.push(event),
  });
  return { windows, recorders, sweeps, reported };
}

describe('MeasurementWindows', () => {
  it('a window holds every group’s counts, its own percentiles, and the gauges at its close', () => {
    let now = 1000;
    const { windows, recorders, sweeps, reported } = windowsAt(() => now);
    windows.arrived(0, 2);
    windows.arrived(1, 4);
    recorders[0]!.attempt(false);
    windows.ok(30);
    windows.close();
    expect(windows.endMs).toBe(2000);
    expect(windows.windows[0]).toMatchObject({
      index: 0,
      startMs: 0,
      durationMs: 1000,
      offered: 2,
      attempts: 1,
      // HDR buckets: within 0.1 %.
      okP50Ms: expect.closeTo(30, 1) as number,
      okP99Ms: expect.closeTo(30, 1) as number,
      lagP99Ms: expect.closeTo(4, 1) as number,
      inFlight: 7,
      connections: 3,
    });
    expect(sweeps).toEqual([1000]);
    expect(reported[0]!.totals).toMatchObject({ offered: 2, attempts: 1, elapsedMs: 1000 });
    // The next window starts empty; the run's lag keeps every arrival.
    now = 2000;
    windows.arrived(0, 1);
    windows.close();
    expect(windows.windows[1]).toMatchObject({
      index: 1,
      offered: 1,
      okP50Ms: null,
      lagP99Ms: expect.closeTo(1, 1) as number,
    });
    expect(windows.lag.count).toBe(3);
    expect(reported[1]!.totals.offered).toBe(3);
    windows.stop();
  });

  it('keeps at most maxWindows, and counts the rest', () => {
    let now = 0;
    const { windows, recorders } = windowsAt(() => now, 2);
    for (let i = 1; i <= 5; i++) {
      now = i * 1000;
      windows.close();
    }
    expect(windows.windows.map((w) => w.index)).toEqual([0, 1]);
    expect(windows.windowsDropped).toBe(3);
    expect(recorders[0]!.windows).toHaveLength(2);
    windows.stop();
  });

  it('the last window may be short: it ends when the run does', () => {
    const { windows } = windowsAt(() => 1250);
    windows.close();
    windows.close();
    expect(windows.windows.map((w) => w.durationMs)).toEqual([1000, 250]);
    windows.stop();
  });
});
