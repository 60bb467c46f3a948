import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { sleepOn, type Clock } from './clock.js';

/** `clock` with every timer firing 0.6 ms early (at least 0.1 ms after it was set). */
function firingEarly(clock: Clock): Clock {
  return {
    now: () => clock.now(),
    wallNow: () => clock.wallNow(),
    setTimer: (ms, fn, options) => clock.setTimer(Math.max(0.1, ms - 0.6), fn, options),
    clearTimer: (handle) => clock.clearTimer(handle),
    sleep: (ms, signal) => clock.sleep(ms, signal),
    timeoutSignal: (ms) => clock.timeoutSignal(ms),
  };
}

describe('sleepOn', () => {
  it('never ends early, even on a clock whose timers fire before their time (as Node’s may, by up to 1 ms)', async () => {
    const base = createVirtualClock();
    const start = base.now();
    let wokeAt: number | undefined;
    void sleepOn(firingEarly(base), 10).then(() => (wokeAt = base.now()));
    await base.advance(9.5);
    expect(wokeAt).toBeUndefined(); // the first timer fired at 9.4 ms
    await base.advance(1);
    expect(wokeAt).toBeGreaterThanOrEqual(start + 10);
  });

  it('an abort while re-armed still rejects, and clears the timer', async () => {
    const base = createVirtualClock();
    const controller = new AbortController();
    const slept = sleepOn(firingEarly(base), 10, controller.signal);
    await base.advance(9.5);
    controller.abort(new Error('left'));
    await expect(slept).rejects.toThrow('left');
    expect(base.pendingTimers).toBe(0);
  });
});
