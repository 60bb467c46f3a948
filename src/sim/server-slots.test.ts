import { describe, expect, it } from 'vitest';
import type { Done, SimRequest } from './server.js';
import { ServerSlots } from './server-slots.js';

const request = (expiresAt: number): SimRequest => ({ expiresAt, abandoned: false });
const none: Done = () => {};

describe('ServerSlots', () => {
  it('serves while slots are free, then lines up in order, and refuses past the line', () => {
    const served: number[] = [];
    const slots = new ServerSlots({ current: 2 }, 2, (r) => served.push(r.expiresAt));
    expect([1, 2, 3, 4, 5].map((i) => slots.enter(request(i), none))).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(served).toEqual([1, 2]);
    expect(slots.waiting).toBe(2);
    slots.release();
    expect(served).toEqual([1, 2, 3]);
    slots.release();
    slots.release();
    expect(served).toEqual([1, 2, 3, 4]);
    expect(slots.waiting).toBe(0);
  });

  it('follows the capacity as it changes, at the next take or release', () => {
    const limit = { current: 1 };
    const served: number[] = [];
    const slots = new ServerSlots(limit, 10, (r) => served.push(r.expiresAt));
    for (const i of [1, 2, 3, 4]) slots.enter(request(i), none);
    expect(served).toEqual([1]);
    limit.current = 3;
    slots.release(); // 1 done: three slots free, three waiters served
    expect(served).toEqual([1, 2, 3, 4]);
    limit.current = 1;
    slots.release();
    slots.release(); // one of the three still busy: at the new capacity, a newcomer waits
    expect(slots.enter(request(5), none)).toBe(true);
    expect(served).toEqual([1, 2, 3, 4]);
    slots.release();
    expect(served).toEqual([1, 2, 3, 4, 5]);
  });

  it('empties the line in order on clear, and keeps serving after', () => {
    const served: number[] = [];
    const refused: number[] = [];
    const slots = new ServerSlots({ current: 1 }, 10, (r) => served.push(r.expiresAt));
    for (const i of [1, 2, 3]) slots.enter(request(i), (_f, r) => refused.push(r.expiresAt));
    slots.clear((r, answer) => answer(undefined, r));
    expect(refused).toEqual([2, 3]);
    expect(slots.waiting).toBe(0);
    slots.release();
    slots.enter(request(4), none);
    expect(served).toEqual([1, 4]);
  });

  it('keeps a long line in order across the compaction of served entries', () => {
    const served: number[] = [];
    const slots = new ServerSlots({ current: 1 }, 10_000, (r) => served.push(r.expiresAt));
    for (let i = 0; i < 5_000; i++) slots.enter(request(i), none);
    for (let i = 0; i < 3_000; i++) slots.release();
    for (let i = 5_000; i < 6_000; i++) slots.enter(request(i), none);
    while (slots.waiting > 0) slots.release();
    expect(served).toEqual(Array.from({ length: 6_000 }, (_, i) => i));
  });
});
