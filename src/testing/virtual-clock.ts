/**
 * A {@link Clock} whose time moves only when a test says so. Timers fire in due order (ties in
 * the order they were set), each with `now()` equal to its due time, and `timeoutSignal` and
 * `sleep` work in virtual time. Nothing here sleeps for real.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../core/clock/clock.js';
import { sleepOn, timeoutSignalOn } from '../core/clock/clock.js';
import { SpillwayArgumentError } from '../core/errors/argument-error.js';
import { optionsObject, nonNegativeNumber, positiveInteger } from '../core/internal/validate.js';

/** Options of {@link createVirtualClock}. */
export interface VirtualClockOptions {
  /** Initial `now()`. @default 0 */
  readonly start?: number;
  /** Initial `wallNow()` (epoch ms); moves with `now()`. @default 1_767_225_600_000 (2026-01-01) */
  readonly wallStart?: number;
  /** Most timers pending at once; setting one more throws (a runaway loop, not a test). @default 100_000 */
  readonly maxTimers?: number;
}

/** A clock for tests. */
export interface VirtualClock extends Clock {
  /**
   * Moves time forward by `ms`, firing due timers in order. Between timers it lets pending
   * promise callbacks run, so code that awaits and then sets a new timer behaves as in real time.
   */
  advance(ms: number): Promise<void>;
  /** Like {@link VirtualClock.advance}, to an absolute time. */
  advanceTo(time: number): Promise<void>;
  /** Synchronous {@link VirtualClock.advance}: fires due timers without running promise callbacks. */
  advanceSync(ms: number): void;
  /** Fires every pending timer (advancing time to each), up to `maxTimers` of them. */
  runAll(): Promise<void>;
  /** Lets pending promise callbacks run without moving time. */
  flush(): Promise<void>;
  /** Timers set and not yet fired or cleared. */
  readonly pendingTimers: number;
}

interface Timer {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
  index: number;
}

/**
 * Creates a virtual clock.
 *
 * @example
 * const clock = createVirtualClock();
 * const bucket = tokenBucket({ ratePerSec: 10, burst: 1, clock });
 * bucket.tryTake();
 * await clock.advance(100);
 */
export function createVirtualClock(options?: VirtualClockOptions): VirtualClock {
  const o = optionsObject('createVirtualClock options', options);
  const start = nonNegativeNumber('start', o.start ?? 0);
  const wallStart = nonNegativeNumber('wallStart', o.wallStart ?? 1_767_225_600_000);
  const maxTimers = positiveInteger('maxTimers', o.maxTimers ?? 100_000);
  return new Virtual(start, wallStart, maxTimers);
}

class Virtual implements VirtualClock {
  #now: number;
  readonly #wallOffset: number;
  readonly #maxTimers: number;
  // Binary min-heap on (due, seq).
  readonly #heap: Timer[] = [];
  #seq = 0;

  constructor(start: number, wallStart: number, maxTimers: number) {
    this.#now = start;
    this.#wallOffset = wallStart - start;
    this.#maxTimers = maxTimers;
  }

  get pendingTimers(): number {
    return this.#heap.length;
  }

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    return this.#now + this.#wallOffset;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    if (this.#heap.length >= this.#maxTimers) {
      throw new SpillwayArgumentError(
        'timer',
        `one of at most ${this.#maxTimers} pending virtual timers`,
        ms,
      );
    }
    const delay = ms > 0 ? ms : 0;
    const timer: Timer = { due: this.#now + delay, seq: this.#seq++, fn, index: this.#heap.length };
    this.#heap.push(timer);
    this.#up(timer.index);
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    const timer = handle as Timer | undefined;
    if (timer === undefined || timer === null || typeof timer !== 'object') return;
    const i = timer.index;
    if (i < 0 || this.#heap[i] !== timer) return;
    this.#removeAt(i);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  timeoutSignal(ms: number): AbortSignal {
    return timeoutSignalOn(this, ms);
  }

  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.#now + checkMs(ms));
  }

  async advanceTo(time: number): Promise<void> {
    if (!(time >= this.#now))
      throw new SpillwayArgumentError('time', `a time at or after now (${this.#now})`, time);
    await this.flush();
    for (let t = this.#heap[0]; t !== undefined && t.due <= time; t = this.#heap[0]) {
      this.#fire(t);
      await this.flush();
    }
    this.#now = time;
    await this.flush();
  }

  advanceSync(ms: number): void {
    const target = this.#now + checkMs(ms);
    for (let t = this.#heap[0]; t !== undefined && t.due <= target; t = this.#heap[0])
      this.#fire(t);
    this.#now = target;
  }

  async runAll(): Promise<void> {
    await this.flush();
    for (let fired = 0; this.#heap[0] !== undefined; fired++) {
      if (fired >= this.#maxTimers) {
        throw new SpillwayArgumentError(
          'runAll',
          `to finish within ${this.#maxTimers} timers (timers keep re-arming)`,
          fired,
        );
      }
      this.#fire(this.#heap[0]);
      await this.flush();
    }
  }

  flush(): Promise<void> {
    // setImmediate runs after every queued microtask, including ones those queue.
    return new Promise((resolve) => setImmediate(resolve));
  }

  #fire(timer: Timer): void {
    this.#removeAt(0);
    if (timer.due > this.#now) this.#now = timer.due;
    timer.fn();
  }

  #removeAt(i: number): void {
    const heap = this.#heap;
    const removed = heap[i]!;
    const last = heap.pop()!;
    removed.index = -1;
    if (last === removed) return;
    heap[i] = last;
    last.index = i;
    this.#down(i);
    this.#up(i);
  }

  #less(a: Timer, b: Timer): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  #up(i: number): void {
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(heap[i]!, heap[parent]!)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const heap = this.#heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && this.#less(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && this.#less(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      this.#swap(i, m);
      i = m;
    }
  }

  #swap(i: number, j: number): void {
    const heap = this.#heap;
    const a = heap[i]!;
    const b = heap[j]!;
    heap[i] = b;
    heap[j] = a;
    a.index = j;
    b.index = i;
  }
}

function checkMs(ms: unknown): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new SpillwayArgumentError('ms', 'a finite number of 0 or more', ms);
  }
  return ms;
}
