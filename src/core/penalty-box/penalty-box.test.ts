import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { penaltyBox } from './penalty-box.js';

describe('penaltyBox', () => {
  const setup = () => {
    const clock = createVirtualClock();
    const box = penaltyBox({
      threshold: 3,
      windowMs: 1_000,
      liftAfterMs: 5_000,
      graceMs: 0,
      steps: [
        { waitMs: 2_000 },
        { waitMs: 10_000, block: true },
        { waitMs: 30_000, block: true, closeConnection: true },
      ],
      clock,
    });
    return { clock, box };
  };

  it('does not count a parallel burst that was on its way before the refusal', () => {
    // quota 5/s, burst 10; one page load of 16 parallel requests, then 2 req/s as told.
    const clock = createVirtualClock();
    const box = penaltyBox({ clock });
    const request = (quotaOk: boolean) => {
      const verdict = box.check('page');
      if (verdict !== undefined) return verdict.reason;
      if (quotaOk) return 'ok';
      box.refused('page', 1_000);
      return 'quota';
    };
    const burst = Array.from({ length: 16 }, (_, i) => {
      clock.advanceSync(2);
      return request(i < 10);
    });
    expect(burst.filter((r) => r === 'quota')).toHaveLength(6);
    expect(burst.filter((r) => r !== 'ok' && r !== 'quota')).toEqual([]);
    clock.advanceSync(1_000);
    for (let i = 0; i < 20; i++) {
      expect(request(true)).toBe('ok');
      clock.advanceSync(500);
    }
    expect(box.stepOf('page')).toBe(0);
  });

  it('still escalates a client that keeps coming after the grace', () => {
    const clock = createVirtualClock();
    const box = penaltyBox({ clock, threshold: 5, graceMs: 500 });
    let verdict;
    for (let i = 0; i < 100 && verdict === undefined; i++) {
      verdict = box.check('greedy');
      if (verdict === undefined) box.refused('greedy', 1_000);
      clock.advanceSync(20);
    }
    expect(verdict).toMatchObject({ reason: 'penalty', step: 1 });
    // Five violations after the 500 ms grace, one every 20 ms.
    expect(clock.now()).toBeGreaterThan(500);
    expect(clock.now()).toBeLessThan(700);
  });

  it('refuses a negative grace by name', () => {
    expect(() => penaltyBox({ graceMs: -1 })).toThrow(/`graceMs`/);
  });

  it('leaves clients that wait out their Retry-After alone', () => {
    const { clock, box } = setup();
    for (let i = 0; i < 20; i++) {
      expect(box.check('good')).toBeUndefined();
      box.refused('good', 100);
      clock.advanceSync(100);
    }
    expect(box.stepOf('good')).toBe(0);
  });

  it('escalates step by step for clients that come back early, and enforces each wait', () => {
    const { clock, box } = setup();
    const hammer = () => {
      const v = box.check('greedy');
      if (v === undefined) box.refused('greedy', 1_000); // the quota said 429, wait 1 s
      clock.advanceSync(10);
      return v;
    };
    hammer();
    hammer();
    hammer();
    const first = hammer(); // third early return within 1 s: step 1
    expect(first).toEqual({
      reason: 'penalty',
      step: 1,
      retryAfterMs: 2_000,
      closeConnection: false,
    });
    // During the enforced wait every request is refused without reaching the quota…
    const during = box.check('greedy');
    expect(during?.reason).toBe('penalty');
    // …and continuing to hammer escalates to the cool-off block, then to closing the connection.
    let v = hammer();
    for (let i = 0; i < 5 && v?.step === 1; i++) v = hammer();
    expect(v).toMatchObject({ reason: 'blocked', step: 2 });
    for (let i = 0; i < 5 && v?.step === 2; i++) v = hammer();
    expect(v).toMatchObject({ reason: 'blocked', step: 3, closeConnection: true });
  });

  it('lifts one step per quiet period once the client behaves', () => {
    const { clock, box } = setup();
    for (let i = 0; i < 4; i++) {
      if (box.check('c') === undefined) box.refused('c', 1_000);
      clock.advanceSync(10);
    }
    for (let i = 0; i < 3; i++) {
      box.check('c'); // three more violations during the wait: step 2
      clock.advanceSync(10);
    }
    expect(box.stepOf('c')).toBe(2);
    clock.advanceSync(10_000); // the block ends
    expect(box.stepOf('c')).toBe(2);
    expect(box.check('c')).toBeUndefined(); // let through once the wait is over
    clock.advanceSync(5_000);
    expect(box.stepOf('c')).toBe(1);
    clock.advanceSync(5_000);
    expect(box.stepOf('c')).toBe(0);
  });

  it('tells its listeners each step a client moves, up and down', () => {
    const { clock, box } = setup();
    const moves: unknown[] = [];
    box.onStepChange((e) => moves.push(e));
    for (let i = 0; i < 4; i++) {
      if (box.check('c', `req${i}`) === undefined) box.refused('c', 1_000);
      clock.advanceSync(10);
    }
    for (let i = 4; i < 7; i++) {
      box.check('c', `req${i}`);
      clock.advanceSync(10);
    }
    clock.advanceSync(20_000);
    expect(box.stepOf('c')).toBe(0);
    const moved = { key: 'c', suspended: false };
    expect(moves).toEqual([
      { ...moved, step: 1, previous: 0, by: 'violations', cause: 'req3' },
      { ...moved, step: 2, previous: 1, by: 'violations', cause: 'req6' },
      { ...moved, step: 0, previous: 2, by: 'quiet' },
    ]);
  });

  it('keeps its state bounded and validates options', () => {
    const clock = createVirtualClock();
    const box = penaltyBox({ maxKeys: 100, clock });
    for (let i = 0; i < 10_000; i++) box.refused(`k${i}`, 1_000);
    expect(box.size).toBe(100);
    expect(() => penaltyBox({ steps: [] })).toThrow(/`steps`/);
    expect(() => penaltyBox({ steps: [{ waitMs: -1 }] })).toThrow(/`steps\[0\].waitMs`/);
    expect(() => penaltyBox({ threshold: 0 })).toThrow(/`threshold`/);
  });
});
