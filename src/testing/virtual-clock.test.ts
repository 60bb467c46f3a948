import { describe, expect, it } from 'vitest';
import { createVirtualClock } from './virtual-clock.js';
import { SpillwayArgumentError } from '../core/errors/argument-error.js';

describe('createVirtualClock', () => {
  it('fires timers in due order, ties in the order they were set, with now() at their due time', async () => {
    const clock = createVirtualClock();
    const fired: string[] = [];
    clock.setTimer(30, () => fired.push(`c@${clock.now()}`));
    clock.setTimer(10, () => fired.push(`a@${clock.now()}`));
    clock.setTimer(10, () => fired.push(`b@${clock.now()}`));
    clock.setTimer(0, () => fired.push(`z@${clock.now()}`));
    await clock.advance(20);
    expect(fired).toEqual(['z@0', 'a@10', 'b@10']);
    expect(clock.now()).toBe(20);
    await clock.advance(10);
    expect(fired).toEqual(['z@0', 'a@10', 'b@10', 'c@30']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('cleared timers never fire, and clearing twice is harmless', async () => {
    const clock = createVirtualClock();
    let fired = 0;
    const handles = Array.from({ length: 50 }, (_, i) => clock.setTimer(i, () => fired++));
    for (const h of handles.filter((_, i) => i % 2 === 0)) {
      clock.clearTimer(h);
      clock.clearTimer(h);
    }
    expect(clock.pendingTimers).toBe(25);
    await clock.advance(100);
    expect(fired).toBe(25);
  });

  it('runs promise callbacks between timers, so awaited code can set new timers in time', async () => {
    const clock = createVirtualClock();
    const seen: number[] = [];
    const loop = async (): Promise<void> => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        seen.push(clock.now());
      }
    };
    const done = loop();
    await clock.advance(35);
    await done;
    expect(seen).toEqual([10, 20, 30]);
  });

  it('sleep rejects with the signal reason at once and leaves no timer behind', async () => {
    const clock = createVirtualClock();
    const controller = new AbortController();
    const slept = clock.sleep(1_000, controller.signal);
    expect(clock.pendingTimers).toBe(1);
    controller.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
    expect(clock.pendingTimers).toBe(0);
  });

  it('timeoutSignal aborts with a TimeoutError in virtual time', async () => {
    const clock = createVirtualClock();
    const signal = clock.timeoutSignal(100);
    await clock.advance(99);
    expect(signal.aborted).toBe(false);
    await clock.advance(1);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('advanceSync fires timers without awaiting, and wallNow moves with now', () => {
    const clock = createVirtualClock({ start: 5, wallStart: 1_000_000 });
    let at = -1;
    clock.setTimer(10, () => (at = clock.now()));
    clock.advanceSync(10);
    expect(at).toBe(15);
    expect(clock.wallNow()).toBe(1_000_010);
  });

  it('bounds its timer set and refuses bad input', async () => {
    const clock = createVirtualClock({ maxTimers: 3 });
    for (let i = 0; i < 3; i++) clock.setTimer(1, () => undefined);
    expect(() => clock.setTimer(1, () => undefined)).toThrow(SpillwayArgumentError);
    await expect(clock.advance(-1)).rejects.toThrow(/`ms`/);
    await expect(clock.advance(Number.NaN)).rejects.toThrow(SpillwayArgumentError);
    expect(() => createVirtualClock({ maxTimers: 0 })).toThrow(/`maxTimers`/);
  });

  it('runAll stops a timer that keeps re-arming instead of spinning forever', async () => {
    const clock = createVirtualClock({ maxTimers: 10 });
    const rearm = (): void => void clock.setTimer(1, rearm);
    rearm();
    await expect(clock.runAll()).rejects.toThrow(/re-arming/);
  });
});
