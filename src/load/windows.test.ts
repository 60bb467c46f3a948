import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveOptions } from './options.js';
import { GroupRecorder } from './recorder.js';
import type { LoadProgress, WindowStats } from './result.js';
import { MeasurementWindows } from './windows.js';

function windowsAt(
  now: () => number,
  maxWindows = 3600,
  run: { durationMs?: number; groups?: number } = {},
) {
  const options = resolveOptions({
    url: 'http://127.0.0.1:8080/',
    durationMs: run.durationMs ?? 5000,
    maxWindows,
    groups: Array.from({ length: run.groups ?? 2 }, (_, i) => ({
      name: String.fromCharCode(97 + (i % 26)) + (i >= 26 ? String(i) : ''),
      ratePerSec: 10,
    })),
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

  describe('steps (a short run’s windows in quarters)', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('a window holds four steps that add up to it, each with its groups’ counts and percentiles', () => {
      vi.useFakeTimers();
      const t0 = Date.now();
      const { windows, recorders } = windowsAt(() => Date.now() - t0);
      windows.start();
      vi.advanceTimersByTime(100);
      windows.arrived(0, 1);
      windows.arrived(1, 1);
      windows.ok(10);
      vi.advanceTimersByTime(300); // 400: the first step closed at 250
      windows.arrived(0, 1);
      recorders[0]!.finished({
        outcome: 'ok',
        latencyMs: 40,
        good: true,
        status: 200,
        retryAfterMs: undefined,
        reason: '',
        fromSendMs: 40,
      });
      windows.ok(40);
      vi.advanceTimersByTime(600); // 1000: the window ends (the schedule closes it)
      windows.close();
      const [w] = windows.windows;
      expect(w!.steps.map((s) => [s.startMs, s.durationMs])).toEqual([
        [0, 250],
        [250, 250],
        [500, 250],
        [750, 250],
      ]);
      expect(w!.steps.map((s) => s.groups.map((g) => g.offered))).toEqual([
        [1, 1],
        [1, 0],
        [0, 0],
        [0, 0],
      ]);
      expect(w!.steps[1]!.groups[0]).toMatchObject({ ok: 1, good: 1 });
      expect(w!.steps.map((s) => s.okP99Ms)).toEqual([
        expect.closeTo(10, 1),
        expect.closeTo(40, 1),
        null,
        null,
      ]);
      expect(w).toMatchObject({ offered: 3, ok: 1 });
      // The next window's steps start where this one closed.
      vi.advanceTimersByTime(600);
      windows.stop();
      windows.close();
      expect(windows.windows[1]!.steps.map((s) => [s.startMs, s.durationMs])).toEqual([
        [1000, 250],
        [1250, 250],
        [1500, 100],
      ]);
    });

    it('a window closed late skips the step ends already past', () => {
      vi.useFakeTimers();
      const t0 = Date.now();
      const { windows } = windowsAt(() => Date.now() - t0);
      windows.start();
      vi.advanceTimersByTime(1600); // a stall: the window closes at 1600, not 1000
      windows.close();
      vi.advanceTimersByTime(400); // 2000
      windows.close();
      expect(windows.windows[1]!.steps.map((s) => [s.startMs, s.durationMs])).toEqual([
        [1600, 150],
        [1750, 250],
      ]);
      windows.stop();
    });

    it('a long run keeps none, and a run with many groups keeps fewer', () => {
      const long = windowsAt(() => 1000, 3600, { durationMs: 60_000 }).windows;
      long.close();
      expect(long.windows[0]!.steps).toEqual([]);
      long.stop();
      // 1000 groups: 20 steps × 1000 counts, the first 5 windows.
      let now = 0;
      const many = windowsAt(() => now, 3600, { groups: 1000 }).windows;
      for (let i = 1; i <= 7; i++) {
        now = i * 1000;
        many.close();
      }
      expect(many.windows.map((w) => w.steps.length)).toEqual([1, 1, 1, 1, 1, 0, 0]);
      many.stop();
    });
  });
});
