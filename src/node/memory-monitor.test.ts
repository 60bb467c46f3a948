// memoryMonitor on a virtual clock over a probe the test sets: when it reads, what it
// decides per criticality, and that in flight cannot grow while memory is over its bound.
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../testing/index.js';
import { memoryMonitor, memoryMonitorWith, type MemorySample } from './memory-monitor.js';

const MiB = 1024 * 1024;

function setup(options: { maxHeapUsedBytes?: number; maxRssBytes?: number } = {}) {
  const clock = createVirtualClock();
  const memory = { heapUsedBytes: 100 * MiB, rssBytes: 200 * MiB };
  const monitor = memoryMonitorWith(() => ({ ...memory }), {
    maxHeapUsedBytes: 500 * MiB,
    clock,
    ...options,
  });
  return { clock, memory, monitor };
}

describe('memoryMonitor', () => {
  it('sheds nothing while memory is under its bounds', () => {
    const { monitor } = setup();
    expect(monitor.underPressure).toBe(false);
    for (const c of ['sheddable', 'critical'] as const)
      expect(monitor.shouldShed(c, 100)).toBe(false);
  });

  it('reads memory every sampleIntervalMs, and sees pressure come and go', async () => {
    const { clock, memory, monitor } = setup();
    const samples: MemorySample[] = [];
    monitor.onSample((s) => samples.push(s));
    memory.heapUsedBytes = 600 * MiB;
    await clock.advance(249);
    expect(monitor.underPressure).toBe(false); // not read yet
    await clock.advance(1);
    expect(monitor.underPressure).toBe(true);
    expect(monitor.heapUsedBytes).toBe(600 * MiB);
    memory.heapUsedBytes = 400 * MiB;
    await clock.advance(250);
    expect(monitor.underPressure).toBe(false);
    expect(samples.map((s) => s.underPressure)).toEqual([true, false]);
    monitor.close();
    expect(clock.pendingTimers).toBe(0);
  });

  it('under pressure, sheds sheddable work and lets critical work in only as others finish', async () => {
    const { clock, memory, monitor } = setup({ maxRssBytes: 1_000 * MiB });
    memory.rssBytes = 1_200 * MiB;
    await clock.advance(250);
    expect(monitor.shouldShed('sheddable', 0)).toBe(true);
    // The first question fixes the ceiling at what was in flight then: 5.
    expect(monitor.shouldShed('critical', 5)).toBe(true);
    expect(monitor.shouldShed('critical', 4)).toBe(false);
    expect(monitor.shouldShed('critical-plus', 6)).toBe(true);
    // Never so strict that nothing at all can run.
    expect(monitor.shouldShed('critical', 1)).toBe(false);
    // Pressure over: the ceiling goes with it, and a new spell starts a new one.
    memory.rssBytes = 900 * MiB;
    await clock.advance(250);
    expect(monitor.shouldShed('critical', 50)).toBe(false);
    memory.rssBytes = 1_100 * MiB;
    await clock.advance(250);
    expect(monitor.shouldShed('critical', 50)).toBe(true);
    expect(monitor.shouldShed('critical', 49)).toBe(false);
    monitor.close();
  });

  it('sheds from the criticality it is told', () => {
    const clock = createVirtualClock();
    const monitor = memoryMonitorWith(() => ({ heapUsedBytes: 10, rssBytes: 10 }), {
      maxHeapUsedBytes: 1,
      shedFrom: 'sheddable-plus',
      clock,
    });
    expect(monitor.shouldShed('sheddable-plus', 0)).toBe(true);
    expect(monitor.shouldShed('critical', 0)).toBe(false);
    monitor.close();
  });

  it('names a bad option, and needs a bound', () => {
    expect(() => memoryMonitor({})).toThrow(/`maxHeapUsedBytes`.*needs a bound/);
    expect(() => memoryMonitor({ maxRssBytes: -1 })).toThrow(/`maxRssBytes`/);
    expect(() => memoryMonitor({ maxHeapUsedBytes: 1, sampleIntervalMs: 0 })).toThrow(
      /`sampleIntervalMs`/,
    );
    expect(() => memoryMonitor({ maxHeapUsedBytes: 1, shedFrom: 'bulk' as never })).toThrow(
      /`shedFrom`/,
    );
  });

  it('reads the real process (a bound far above it: no pressure)', () => {
    using monitor = memoryMonitor({ maxRssBytes: 2 ** 50 });
    expect(monitor.rssBytes).toBeGreaterThan(0);
    expect(monitor.heapUsedBytes).toBeGreaterThan(0);
    expect(monitor.underPressure).toBe(false);
  });
});
