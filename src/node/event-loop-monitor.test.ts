import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../testing/index.js';
import {
  eventLoopMonitor,
  monitorWith,
  type EventLoopSample,
  type LoopProbe,
} from './event-loop-monitor.js';

/** A probe that reports whatever the test sets. */
function scriptedProbe(): LoopProbe & { utilization: number; delayMs: number; closed: boolean } {
  return {
    utilization: 0,
    delayMs: 0,
    closed: false,
    read() {
      return { utilization: this.utilization, delayMs: this.delayMs };
    },
    close() {
      this.closed = true;
    },
  };
}

describe('eventLoopMonitor decisions (scripted loop, virtual clock)', () => {
  it('sheds nothing while the loop is not saturated', () => {
    const clock = createVirtualClock();
    const loop = monitorWith(scriptedProbe(), { clock });
    clock.advanceSync(100);
    expect(loop.saturated).toBe(false);
    expect(loop.shouldShed('sheddable', 10_000)).toBe(false);
    loop.close();
  });

  it('while saturated: sheds sheddable work at once, other work only above the safe level', () => {
    const clock = createVirtualClock();
    const probe = scriptedProbe();
    const loop = monitorWith(probe, { clock });
    // One interval of history: 200 completions in 100 ms (2 per ms) taking 5 ms each.
    for (let i = 0; i < 200; i++) loop.onComplete(5);
    clock.advanceSync(100);
    expect(loop.safeInflight).toBe(10); // 2 per ms × 5 ms
    probe.utilization = 0.95;
    clock.advanceSync(100);
    expect(loop.saturated).toBe(true);
    expect(loop.shouldShed('sheddable', 0)).toBe(true);
    expect(loop.shouldShed('sheddable-plus', 10)).toBe(false);
    expect(loop.shouldShed(undefined, 10)).toBe(false); // undefined means critical
    expect(loop.shouldShed('critical', 11)).toBe(true);
    expect(loop.shouldShed('critical-plus', 11)).toBe(true);
    probe.utilization = 0.2;
    clock.advanceSync(100);
    expect(loop.shouldShed('critical', 11)).toBe(false);
    expect(loop.shouldShed('sheddable', 11)).toBe(false);
    loop.close();
  });

  it('a long delay in two intervals running saturates it too, and shedFrom moves the line', () => {
    const clock = createVirtualClock();
    const probe = scriptedProbe();
    const loop = monitorWith(probe, { clock, maxDelayMs: 40, shedFrom: 'sheddable-plus' });
    probe.delayMs = 45;
    clock.advanceSync(100);
    expect(loop.saturated).toBe(false); // one pause: over by the time it is seen
    clock.advanceSync(100);
    expect(loop.saturated).toBe(true);
    expect(loop.delayMs).toBe(45);
    expect(loop.shouldShed('sheddable-plus', 0)).toBe(true);
    expect(loop.shouldShed('critical', 1_000)).toBe(false); // no history: no estimate, no refusal
    loop.close();
  });

  it('does not hold a single pause against the next interval: critical work goes on', () => {
    // 500 req/s of 5 ms work, and one 60 ms pause (a GC, a slow synchronous call) every 2.4 s.
    const clock = createVirtualClock();
    const probe = scriptedProbe();
    const loop = monitorWith(probe, { clock });
    let refused = 0;
    for (let interval = 0; interval < 100; interval++) {
      const paused = interval % 24 === 23;
      probe.utilization = paused ? 0.65 : 0.1;
      probe.delayMs = paused ? 60 : 2;
      for (let i = 0; i < 50; i++) loop.onComplete(paused ? 65 : 5);
      clock.advanceSync(100);
      // After the pause, the requests it held up arrive at once.
      const inflight = paused ? 30 : 3;
      if (loop.shouldShed('critical', inflight)) refused++;
      if (loop.shouldShed('sheddable', inflight)) refused++;
    }
    expect(refused).toBe(0);
  });

  it('while saturated, refuses work read more than maxTurnMs into one turn of the loop', async () => {
    // A synchronous, CPU-bound handler: nothing is in flight when the next request is asked
    // about, and requests that queued in the socket buffers are read one after another, 1 ms of
    // work apart, in one turn of the loop.
    const clock = createVirtualClock();
    const probe = scriptedProbe();
    const loop = monitorWith(probe, { clock, maxTurnMs: 50 });
    probe.utilization = 1;
    clock.advanceSync(100);
    expect(loop.saturated).toBe(true);
    const turn = (n: number): boolean[] => {
      const shed: boolean[] = [];
      for (let i = 0; i < n; i++) {
        shed.push(loop.shouldShed('critical', 0));
        clock.advanceSync(1);
      }
      return shed;
    };
    const first = turn(80);
    // Read 0 to 50 ms into the turn: served; later: refused.
    expect(first.indexOf(true)).toBe(51);
    expect(first.slice(51).every((shed) => shed)).toBe(true);
    // The next turn starts afresh.
    await new Promise((resolve) => setImmediate(resolve));
    expect(turn(3)).toEqual([false, false, false]);
    // The least critical go first: sheddable-plus after half of it, critical-plus after twice.
    await new Promise((resolve) => setImmediate(resolve));
    const firstRefused = (criticality: 'critical-plus' | 'critical' | 'sheddable-plus'): number => {
      const start = clock.now();
      let at = -1;
      for (let i = 0; i < 120 && at < 0; i++) {
        if (loop.shouldShed(criticality, 0)) at = clock.now() - start;
        clock.advanceSync(1);
      }
      return at;
    };
    expect(firstRefused('sheddable-plus')).toBe(26);
    await new Promise((resolve) => setImmediate(resolve));
    expect(firstRefused('critical')).toBe(51);
    await new Promise((resolve) => setImmediate(resolve));
    expect(firstRefused('critical-plus')).toBe(101);
    // A loop that is not saturated refuses nothing, however long the turn.
    probe.utilization = 0.5;
    clock.advanceSync(100);
    await new Promise((resolve) => setImmediate(resolve));
    expect(turn(80).some((shed) => shed)).toBe(false);
    loop.close();
  });

  it('with maxTurnMs Infinity, times no turn: critical work waits, sheddable work is still shed', () => {
    const clock = createVirtualClock();
    const probe = scriptedProbe();
    const loop = monitorWith(probe, { clock, maxTurnMs: Infinity });
    probe.utilization = 1;
    clock.advanceSync(100);
    expect(loop.saturated).toBe(true);
    const shed: boolean[] = [];
    for (let i = 0; i < 200; i++) {
      shed.push(loop.shouldShed('critical', 0));
      clock.advanceSync(1);
    }
    expect(shed.some((s) => s)).toBe(false);
    expect(loop.shouldShed('sheddable', 0)).toBe(true);
    expect(() => eventLoopMonitor({ maxTurnMs: -Infinity })).toThrow(/`maxTurnMs`/);
    loop.close();
  });

  it('serves 20 ms of a saturated turn to critical work by default', () => {
    const clock = createVirtualClock();
    const probe = scriptedProbe();
    const loop = monitorWith(probe, { clock });
    probe.utilization = 1;
    clock.advanceSync(100);
    const shed: boolean[] = [];
    for (let i = 0; i < 30; i++) {
      shed.push(loop.shouldShed('critical', 0));
      clock.advanceSync(1);
    }
    expect(shed.indexOf(true)).toBe(21);
    loop.close();
  });

  it('never refuses with one request in flight, and forgets history older than windowMs', () => {
    const clock = createVirtualClock();
    const probe = scriptedProbe();
    const loop = monitorWith(probe, { clock, windowMs: 300 });
    loop.onComplete(100);
    clock.advanceSync(100); // 1 completion in 100 ms × 100 ms = 1
    expect(loop.safeInflight).toBe(1);
    probe.utilization = 1;
    clock.advanceSync(100);
    expect(loop.shouldShed('critical', 1)).toBe(false);
    expect(loop.shouldShed('critical', 2)).toBe(true);
    clock.advanceSync(200); // the completion is now older than 300 ms
    expect(loop.safeInflight).toBe(Infinity);
    loop.close();
  });

  it('counts a late tick as delay: a loop blocked past its sample time is saturated', () => {
    const clock = createVirtualClock();
    // A clock whose timers fire 80 ms after they are due, as on a loop blocked by a handler.
    const lateClock = {
      ...clock,
      now: () => clock.now(),
      setTimer: (ms: number, fn: () => void) => clock.setTimer(ms + 80, fn),
      clearTimer: (h: object) => clock.clearTimer(h),
    };
    const loop = monitorWith(scriptedProbe(), { clock: lateClock, maxDelayMs: 50 });
    clock.advanceSync(360);
    expect(loop.delayMs).toBe(80);
    expect(loop.saturated).toBe(true);
    loop.close();
  });

  it('asks for an unref timer, and close() stops it (idempotent, disposable)', () => {
    const clock = createVirtualClock();
    const unrefs: unknown[] = [];
    const spyClock = {
      ...clock,
      now: () => clock.now(),
      setTimer: (ms: number, fn: () => void, o?: { readonly unref?: boolean }) => {
        unrefs.push(o?.unref);
        return clock.setTimer(ms, fn);
      },
      clearTimer: (h: object) => clock.clearTimer(h),
    };
    const probe = scriptedProbe();
    {
      using loop = monitorWith(probe, { clock: spyClock });
      clock.advanceSync(250);
      expect(loop.saturated).toBe(false);
    }
    expect(unrefs.length).toBeGreaterThan(0);
    expect(unrefs.every((u) => u === true)).toBe(true);
    expect(clock.pendingTimers).toBe(0);
    expect(probe.closed).toBe(true);
  });

  it('validates its options, naming them', () => {
    expect(() => eventLoopMonitor({ sampleIntervalMs: 0 })).toThrow(/`sampleIntervalMs`/);
    expect(() => eventLoopMonitor({ maxUtilization: 1.5 })).toThrow(/`maxUtilization`/);
    expect(() => eventLoopMonitor({ maxDelayMs: -1 })).toThrow(/`maxDelayMs`/);
    expect(() => eventLoopMonitor({ maxTurnMs: Number.NaN })).toThrow(/`maxTurnMs`/);
    expect(() => eventLoopMonitor({ shedFrom: 'nobody' as never })).toThrow(/`shedFrom`/);
    expect(() => eventLoopMonitor({ windowMs: 0 })).toThrow(/`windowMs`/);
    expect(() => eventLoopMonitor({ clock: {} as never })).toThrow(/`clock`/);
  });
});

describe('eventLoopMonitor on the real event loop', () => {
  it('detects a CPU-bound handler within 2 sample intervals and clears after it stops', async () => {
    const intervalMs = 50;
    const loop = eventLoopMonitor({ sampleIntervalMs: intervalMs });
    const samples: EventLoopSample[] = [];
    loop.onSample((s) => samples.push(s));
    try {
      await sleep(3 * intervalMs);
      expect(samples.length).toBeGreaterThanOrEqual(1);
      expect(samples.at(-1)!.saturated).toBe(false);

      // A "handler" that burns 5 ms of CPU per request, requests back to back for 400 ms.
      const busyFrom = samples.length;
      let detectedAfter = -1;
      await new Promise<void>((resolve) => {
        const end = performance.now() + 400;
        const handle = (): void => {
          const until = performance.now() + 5;
          while (performance.now() < until); // CPU-bound work
          if (detectedAfter === -1 && loop.saturated) detectedAfter = samples.length - busyFrom;
          if (performance.now() < end) setImmediate(handle);
          else resolve();
        };
        setImmediate(handle);
      });
      expect(detectedAfter).toBeGreaterThanOrEqual(1);
      expect(detectedAfter).toBeLessThanOrEqual(2);
      expect(loop.shouldShed('sheddable', 0)).toBe(true);

      const idleFrom = samples.length;
      await sleep(3 * intervalMs);
      const after = samples.slice(idleFrom);
      const clearedAt = after.findIndex((s) => !s.saturated);
      expect(clearedAt).toBeGreaterThanOrEqual(0);
      expect(clearedAt).toBeLessThanOrEqual(1); // the first or second sample after it stops
      expect(loop.saturated).toBe(false);
    } finally {
      loop.close();
    }
  });
});
