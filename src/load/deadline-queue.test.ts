import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineQueue, type DeadlineEntry } from './deadline-queue.js';

interface Entry extends DeadlineEntry {
  readonly id: number;
}

function entry(id: number): Entry {
  return {
    id,
    deadlineAt: 0,
    prevDeadline: undefined,
    nextDeadline: undefined,
    inDeadlines: false,
  };
}

// Node's timers under vitest's fake clock (Date and timers advance together, never for real).
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('DeadlineQueue', () => {
  it('expires entries at their deadline, in deadline order, and never before it', () => {
    const t0 = Date.now();
    const now = () => Date.now() - t0;
    const expired: [number, number][] = [];
    const queue = new DeadlineQueue<Entry>(now, (e) => expired.push([e.id, now()]));
    queue.add(entry(1), 100);
    queue.add(entry(2), 50); // out of order: goes before 1
    queue.add(entry(3), 100);
    queue.add(entry(4), 300);
    vi.advanceTimersByTime(49);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual([[2, 50]]);
    vi.advanceTimersByTime(50);
    expect(expired).toEqual([
      [2, 50],
      [1, 100],
      [3, 100],
    ]);
    vi.advanceTimersByTime(1000);
    expect(expired.map(([id]) => id)).toEqual([2, 1, 3, 4]);
  });

  it('a removed entry never expires; clear forgets everything and stops the timer', () => {
    const t0 = Date.now();
    const expired: number[] = [];
    const queue = new DeadlineQueue<Entry>(
      () => Date.now() - t0,
      (e) => expired.push(e.id),
    );
    const a = entry(1);
    const b = entry(2);
    const c = entry(3);
    queue.add(a, 10);
    queue.add(b, 20);
    queue.add(c, 30);
    queue.remove(a); // the head: the timer still fires at 10, finds b not due, re-arms
    queue.remove(a); // twice is harmless
    expect(a.inDeadlines).toBe(false);
    vi.advanceTimersByTime(25);
    expect(expired).toEqual([2]);
    queue.clear();
    expect(c.inDeadlines).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(100);
    expect(expired).toEqual([2]);
  });

  it('an expiry handler may add entries (a retry) and they expire in turn', () => {
    const t0 = Date.now();
    const now = () => Date.now() - t0;
    const expired: number[] = [];
    const queue: DeadlineQueue<Entry> = new DeadlineQueue<Entry>(now, (e) => {
      expired.push(e.id);
      if (e.id < 3) queue.add(entry(e.id + 1), now() + 10);
    });
    queue.add(entry(1), 10);
    vi.advanceTimersByTime(100);
    expect(expired).toEqual([1, 2, 3]);
  });

  it('a deadline beyond the longest timer waits, instead of waking every millisecond', () => {
    // Node's setTimeout fires a delay past 2^31 − 1 ms after 1 ms (the fake clock does the same).
    const t0 = Date.now();
    let reads = 0;
    const expired: number[] = [];
    const queue = new DeadlineQueue<Entry>(
      () => {
        reads++;
        return Date.now() - t0;
      },
      (e) => expired.push(e.id),
    );
    queue.add(entry(1), 1e11);
    reads = 0;
    vi.advanceTimersByTime(10_000);
    expect(expired).toEqual([]);
    expect(reads).toBe(0);
    queue.add(entry(2), 20_000);
    vi.advanceTimersByTime(10_000);
    expect(expired).toEqual([2]);
    queue.clear();
  });

  it('any sequence of adds and removes expires exactly the entries left, in deadline order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.integer({ min: 0, max: 1000 }), remove: fc.boolean() }), {
          maxLength: 60,
        }),
        (ops) => {
          vi.clearAllTimers();
          const t0 = Date.now();
          const expired: Entry[] = [];
          const queue = new DeadlineQueue<Entry>(
            () => Date.now() - t0,
            (e) => expired.push(e),
          );
          const entries = ops.map((op, i) => {
            const e = entry(i);
            queue.add(e, op.at);
            return e;
          });
          ops.forEach((op, i) => {
            if (op.remove) queue.remove(entries[i]!);
          });
          vi.advanceTimersByTime(1001);
          const kept = entries.filter((_, i) => !ops[i]!.remove);
          expect(expired.map((e) => e.id).sort((x, y) => x - y)).toEqual(kept.map((e) => e.id));
          const times = expired.map((e) => e.deadlineAt);
          expect(times).toEqual([...times].sort((x, y) => x - y));
        },
      ),
    );
  });
});
