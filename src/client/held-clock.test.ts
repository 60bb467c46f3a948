import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../testing/index.js';
import { HeldClock } from './held-clock.js';

describe('HeldClock', () => {
  it('reads through, except between hold() and release(), when it answers one reading', async () => {
    const base = createVirtualClock();
    let reads = 0;
    const counting = Object.assign(Object.create(base) as typeof base, {
      now: () => {
        reads++;
        return base.now();
      },
    });
    const clock = new HeldClock(counting);
    const t0 = clock.now();
    await base.advance(5);
    expect(clock.now()).toBe(t0 + 5);
    clock.hold();
    await base.advance(7);
    expect(reads).toBe(2); // a hold reads nothing until asked
    expect([clock.now(), clock.now()]).toEqual([t0 + 12, t0 + 12]);
    await base.advance(1);
    expect(clock.now()).toBe(t0 + 12);
    expect(reads).toBe(3); // one reading for the whole hold
    clock.release();
    expect(clock.now()).toBe(t0 + 13);
    clock.hold();
    clock.release();
    expect(reads).toBe(4); // an empty hold cost nothing
  });

  it('passes wall time and timers through to the clock it wraps', async () => {
    const base = createVirtualClock();
    const clock = new HeldClock(base);
    expect(clock.wallNow()).toBe(base.wallNow());
    let fired = 0;
    clock.setTimer(10, () => fired++);
    const cleared = clock.setTimer(10, () => fired++);
    clock.clearTimer(cleared);
    const slept = clock.sleep(20);
    const signal = clock.timeoutSignal(30);
    await base.advance(30);
    await slept;
    expect(fired).toBe(1);
    expect(signal.aborted).toBe(true);
  });
});
