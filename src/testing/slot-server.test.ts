import { describe, expect, it } from 'vitest';
import { createSlotServer } from './slot-server.js';
import { createVirtualClock } from './virtual-clock.js';

describe('createSlotServer', () => {
  it('serves `slots` at once for serviceTimeMs each, lines up the rest, refuses past maxQueue', () => {
    const clock = createVirtualClock();
    const server = createSlotServer({ slots: 2, serviceTimeMs: 10, maxQueue: 1, clock });
    const done: string[] = [];
    for (const name of ['a', 'b', 'c', 'd']) {
      server.submit((ok) => done.push(`${name}${ok ? '' : ' refused'}@${clock.now()}`));
    }
    expect(done).toEqual(['d refused@0']);
    expect([server.busy, server.queued, server.refused]).toEqual([2, 1, 1]);
    clock.advanceSync(10);
    expect(done).toEqual(['d refused@0', 'a@10', 'b@10']);
    clock.advanceSync(10);
    expect(done.at(-1)).toBe('c@20');
    expect([server.busy, server.queued, server.served]).toEqual([0, 0, 3]);
  });

  it('reads slots and service time as each request starts, so capacity can change mid-run', () => {
    const clock = createVirtualClock();
    let slots = 1;
    let serviceMs = 10;
    const server = createSlotServer({ slots: () => slots, serviceTimeMs: () => serviceMs, clock });
    const finished: number[] = [];
    for (let i = 0; i < 3; i++) server.submit(() => finished.push(clock.now()));
    slots = 3;
    serviceMs = 50;
    clock.advanceSync(100);
    expect(finished).toEqual([10, 60, 60]); // both waiters start when the first slot frees
  });

  it('validates its options, naming them', () => {
    expect(() => createSlotServer({ slots: 0, serviceTimeMs: 1 })).toThrow(/`slots`/);
    expect(() => createSlotServer({ slots: 1, serviceTimeMs: -1 })).toThrow(/`serviceTimeMs`/);
    expect(() => createSlotServer({ slots: 1, serviceTimeMs: 'x' as never })).toThrow(
      /`serviceTimeMs`/,
    );
    expect(() => createSlotServer({ slots: 1, serviceTimeMs: 1, maxQueue: -1 })).toThrow(
      /`maxQueue`/,
    );
  });
});
