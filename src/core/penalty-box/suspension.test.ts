import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { penaltyBox, type PenaltyStepEvent } from './penalty-box.js';

const hour = 3_600_000;

describe('penaltyBox suspension', () => {
  const setup = (more: Parameters<typeof penaltyBox>[0] = {}) => {
    const clock = createVirtualClock();
    const box = penaltyBox({
      threshold: 2,
      windowMs: 1_000,
      liftAfterMs: 1_000,
      graceMs: 0,
      steps: [{ waitMs: 500, block: true }, { suspend: true }],
      clock,
      ...more,
    });
    const moves: PenaltyStepEvent[] = [];
    box.onStepChange((e) => moves.push(e));
    /** One request from `key` that ignores Retry-After: refused by its quota when not boxed. */
    const hammer = (key: string) => {
      const v = box.check(key, 'req');
      if (v === undefined) box.refused(key, 1_000);
      clock.advanceSync(10);
      return v;
    };
    return { clock, box, moves, hammer };
  };

  it('the last step suspends until an operator lifts it, however long that is', () => {
    const { clock, box, moves, hammer } = setup();
    let v;
    for (let i = 0; i < 100 && v?.reason !== 'suspended'; i++) v = hammer('greedy');
    expect(v).toEqual({
      reason: 'suspended',
      step: 2,
      retryAfterMs: undefined,
      closeConnection: false,
    });
    expect(moves.at(-1)).toMatchObject({ step: 2, previous: 1, suspended: true, by: 'violations' });
    clock.advanceSync(24 * hour);
    expect(box.check('greedy')?.reason).toBe('suspended');
    expect(box.stepOf('greedy')).toBe(2); // quiet time lifts no suspension
    expect(box.isSuspended('greedy')).toBe(true);
    box.lift('greedy');
    expect(moves.at(-1)).toEqual({
      key: 'greedy',
      step: 0,
      previous: 2,
      suspended: false,
      by: 'operator',
    });
    expect(box.check('greedy')).toBeUndefined();
    expect(box.suspended).toBe(0);
  });

  it('an operator suspends any key, and lifts it', () => {
    const { box, moves } = setup();
    box.suspend('tenant-7');
    box.suspend('tenant-7'); // idempotent
    expect(box.check('tenant-7')).toMatchObject({ reason: 'suspended', step: 0 });
    expect(box.suspended).toBe(1);
    expect(moves).toEqual([
      { key: 'tenant-7', step: 0, previous: 0, suspended: true, by: 'operator' },
    ]);
    box.lift('tenant-7');
    box.lift('never-seen'); // nothing to lift, no error
    expect(box.check('tenant-7')).toBeUndefined();
  });

  it('never forgets a suspended key, however many others pass', () => {
    const { box } = setup({ maxKeys: 10, maxSuspended: 3 });
    box.suspend('a');
    for (let i = 0; i < 1_000; i++) box.refused(`k${i}`, 1_000);
    expect(box.size).toBe(10);
    expect(box.check('a')?.reason).toBe('suspended');
  });

  it('holds at most maxSuspended: then suspend throws and the ladder repeats its block', () => {
    const { box, hammer } = setup({ maxKeys: 10, maxSuspended: 1 });
    box.suspend('a');
    expect(() => box.suspend('b')).toThrow(/maxSuspended \(1\)/);
    const reasons = new Set<string>();
    for (let i = 0; i < 300; i++) reasons.add(hammer('greedy')?.reason ?? 'quota');
    expect([...reasons].sort()).toEqual(['blocked', 'quota']);
    box.lift('a');
    let v;
    for (let i = 0; i < 300 && v?.reason !== 'suspended'; i++) v = hammer('greedy');
    expect(v?.reason).toBe('suspended');
  });

  it('validates where a suspension may go', () => {
    expect(() => penaltyBox({ steps: [{ suspend: true }] })).toThrow(/`steps\[0\].suspend`/);
    expect(() => penaltyBox({ steps: [{ suspend: true }, { waitMs: 1 }] })).toThrow(
      /`steps\[0\].suspend`/,
    );
    expect(() => penaltyBox({ steps: [{ block: true }] })).toThrow(/`steps\[0\].waitMs`/);
    expect(() => penaltyBox({ maxKeys: 10, maxSuspended: 10 })).toThrow(/`maxSuspended`/);
  });
});
