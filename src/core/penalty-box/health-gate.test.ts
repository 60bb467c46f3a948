import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { penaltyBox } from './penalty-box.js';

describe('penaltyBox with liftWhen (lifting on metrics)', () => {
  const setup = (spreadMs = 0) => {
    const clock = createVirtualClock();
    let load = 0;
    const box = penaltyBox({
      threshold: 2,
      windowMs: 1_000,
      liftAfterMs: 1_000,
      graceMs: 0,
      steps: [{ waitMs: 200 }, { waitMs: 1_000, block: true }],
      // Healthy after 3 readings in a row at or under 10, one every 100 ms.
      liftWhen: { load: () => load, healthyAt: 10, samples: 3, sampleMs: 100, spreadMs },
      clock,
    });
    const setLoad = (n: number) => (load = n);
    /** Ignores Retry-After until `key` is blocked. */
    const block = (key: string) => {
      for (let i = 0; i < 1_000; i++) {
        const v = box.check(key);
        if (v?.reason === 'blocked') return;
        if (v === undefined) box.refused(key, 1_000);
        clock.advanceSync(10);
      }
      throw new Error(`${key} never blocked`);
    };
    return { clock, box, setLoad, block };
  };

  it('a block outlasts its wait while the service is unhealthy, and ends once healthy again', () => {
    const { clock, box, setLoad, block } = setup();
    block('c');
    setLoad(50);
    clock.advanceSync(1_100); // the block's second is over, but every reading was over 10
    const held = box.check('c');
    // Told to come back once three healthy readings could have been taken.
    expect(held).toMatchObject({ reason: 'blocked', step: 2, retryAfterMs: 300 });
    setLoad(5);
    clock.advanceSync(200);
    expect(box.check('c')?.reason).toBe('blocked'); // two healthy readings: not yet
    clock.advanceSync(100);
    expect(box.check('c')).toBeUndefined();
  });

  it('without the gate, the same block ends on its timer', () => {
    const clock = createVirtualClock();
    const box = penaltyBox({
      threshold: 1,
      graceMs: 0,
      steps: [{ waitMs: 1_000, block: true }],
      clock,
    });
    box.refused('c', 1_000);
    clock.advanceSync(10);
    expect(box.check('c')?.reason).toBe('blocked');
    clock.advanceSync(1_000);
    expect(box.check('c')).toBeUndefined();
  });

  it('quiet time lifts no step while unhealthy, and counts from when health returned', () => {
    const { clock, box, setLoad, block } = setup();
    block('c');
    clock.advanceSync(1_000); // healthy: the block ends on time
    expect(box.check('c')).toBeUndefined();
    setLoad(50);
    clock.advanceSync(5_000);
    expect(box.stepOf('c')).toBe(2);
    setLoad(0);
    clock.advanceSync(300); // the third healthy reading comes within these 300 ms
    clock.advanceSync(600); // under a second since it: no step lifted yet
    expect(box.stepOf('c')).toBe(2);
    clock.advanceSync(400); // a second since it, whatever the readings' phase
    expect(box.stepOf('c')).toBe(1);
  });

  it('coming back before the held Retry-After is a violation, as in any block', () => {
    const { clock, box, setLoad, block } = setup();
    block('c');
    setLoad(50);
    clock.advanceSync(1_100);
    expect(box.check('c')?.retryAfterMs).toBe(300);
    clock.advanceSync(10);
    // Two violations within a second move it up a step: at the top, its block starts again.
    box.check('c');
    clock.advanceSync(10);
    expect(box.check('c')).toMatchObject({ reason: 'blocked', retryAfterMs: 1_000 });
  });

  it('lets held clients back spread over spreadMs, not as one wave', () => {
    const { clock, box, setLoad, block } = setup(10_000);
    const keys = Array.from({ length: 200 }, (_, i) => `client-${i}`);
    for (const k of keys) block(k);
    setLoad(50);
    clock.advanceSync(2_000);
    setLoad(0);
    // Healthy from the third reading, within these 300 ms. (Asking again 5 s apart, a held
    // key may commit a violation, but never two within windowMs: nobody escalates.)
    clock.advanceSync(300);
    const released = () => keys.filter((k) => box.check(k) === undefined).length;
    expect(released()).toBeLessThan(10);
    clock.advanceSync(5_000);
    const half = released();
    expect(half).toBeGreaterThan(60);
    expect(half).toBeLessThan(140);
    clock.advanceSync(5_000);
    expect(released()).toBe(200);
  });

  it('reads a load that throws, or is not a number, as unhealthy', () => {
    for (const bad of [
      () => {
        throw new Error('no reading');
      },
      () => NaN,
      () => 'low' as unknown as number,
    ]) {
      const clock = createVirtualClock();
      const box = penaltyBox({
        threshold: 1,
        graceMs: 0,
        steps: [{ waitMs: 100, block: true }],
        liftWhen: { load: bad, healthyAt: 10, sampleMs: 50, spreadMs: 0 },
        clock,
      });
      box.refused('c', 1_000);
      clock.advanceSync(10);
      expect(box.check('c')?.reason).toBe('blocked');
      clock.advanceSync(1_000);
      expect(box.check('c')?.reason).toBe('blocked');
    }
  });

  it('validates its options by name, and close stops the readings', () => {
    const clock = createVirtualClock();
    const load = () => 0;
    const make = (liftWhen: object) =>
      penaltyBox({ clock, liftWhen: liftWhen as { load: () => number; healthyAt: number } });
    expect(() => make({ healthyAt: 1 })).toThrow(/`liftWhen.load`/);
    expect(() => make({ load })).toThrow(/`liftWhen.healthyAt`/);
    expect(() => make({ load, healthyAt: 1, samples: 0 })).toThrow(/`liftWhen.samples`/);
    expect(() => make({ load, healthyAt: 1, sampleMs: 0 })).toThrow(/`liftWhen.sampleMs`/);
    const box = make({ load, healthyAt: 1 });
    expect(clock.pendingTimers).toBe(1);
    box.close();
    box.close();
    expect(clock.pendingTimers).toBe(0);
  });
});
