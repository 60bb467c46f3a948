/**
 * The simulator's clock: a {@link Clock} whose time jumps from one event to the next, with a
 * bounded event list. Between two events every pending promise callback runs, so the real
 * primitives (promise-based `dependency().call`, `concurrencyLimit().acquire`) see time exactly
 * as they would in real life — a callback that sets a timer sets it at the instant it woke.
 *
 * How the callbacks are drained without a trip through the event loop: the loop's next step is
 * queued with `process.nextTick` from inside a microtask, and Node runs the tick queue only once
 * the microtask queue is empty (microtasks queued by microtasks included). That costs a
 * microtask and a tick per drained event instead of an event-loop turn (`setImmediate`), which
 * `spillway/testing`'s virtual clock takes (measured beside this one in `bench/sim.js`).
 *
 * Most events need no drain at all: the simulator's own parts (arrivals, a server's service
 * time, a naive link's timeout) answer by callback. Their timers are set with `setOwnTimer`
 * and fire one after another in one step, until one touches promise code — the real
 * `dependency()`, a guard, a promise settled — and says so with `touch()`; a timer set through
 * the `Clock` interface (a real primitive's) is always followed by a drain. A test runs every
 * scenario both ways and holds the results identical.
 *
 * The event list is a binary heap. Timers that all last the same (a link's timeout, one per
 * waiting request) go through a {@link TimerQueue}: they fall due in the order they were set, so
 * the queue stands in the heap as one event, and a line of 33,000 waiting requests costs the
 * heap one entry instead of 33,000.
 *
 * @module
 */
import { SpillwayConfigError, type Clock, type TimerHandle } from '../index.js';
import { sleepOn, timeoutSignalOn } from '../core/clock/clock.js';

/** Thrown (and the run rejected) when more events are pending than the bound allows. */
export class SimEventsFullError extends SpillwayConfigError {
  constructor(maxEvents: number) {
    super('maxEvents', `room for more than ${maxEvents} pending events`, maxEvents);
  }
}

/** An entry of the event list: a timer, or a queue's first pending timer standing in for it. */
interface Event {
  due: number;
  /**
   * The order of events due at the same time, twice the count of timers set before it, plus
   * one when promise callbacks may follow it (a timer set through the `Clock` interface).
   */
  seq: number;
  readonly fn: () => void;
  /** Its place in the heap; -1 when not in it. */
  index: number;
}

/** A timer of a {@link TimerQueue}. */
class QueuedTimer {
  readonly queue: TimerQueue;
  readonly fn: () => void;
  readonly due: number;
  /** Set by the clock as it queues the timer: the order of timers due at the same time. */
  seq = 0;
  next: QueuedTimer | undefined = undefined;
  prev: QueuedTimer | undefined = undefined;
  /** Still to fire (not fired, not cleared). */
  pending = true;

  constructor(queue: TimerQueue, fn: () => void, due: number) {
    this.queue = queue;
    this.fn = fn;
    this.due = due;
  }
}

/**
 * Timers that all last `ms`: each falls due after the one set before it, so only the first
 * pending one needs a place in the event list — the queue's own entry, keyed as that timer.
 * Setting or clearing one costs O(1), firing one O(log n) in a heap without the others.
 */
export class TimerQueue {
  readonly ms: number;
  readonly #clock: SimClock;
  /** The queue's entry in the event list, keyed as `head`. */
  readonly entry: Event;
  head: QueuedTimer | undefined;
  tail: QueuedTimer | undefined;

  constructor(clock: SimClock, ms: number) {
    this.#clock = clock;
    this.ms = ms;
    this.entry = { due: 0, seq: 0, fn: () => this.#fireHead(), index: -1 };
  }

  /**
   * Calls `fn` after the queue's duration, as an own timer (see {@link SimClock.setOwnTimer});
   * cleared with the clock's `clearTimer`.
   */
  set(fn: () => void): TimerHandle {
    return this.#clock.queueTimer(this, fn);
  }

  /** Takes `t` out of the queue; the entry then stands for the new first timer, if any. */
  unlink(t: QueuedTimer): void {
    t.pending = false;
    const { next, prev } = t;
    if (prev === undefined) this.head = next;
    else prev.next = next;
    if (next === undefined) this.tail = prev;
    else next.prev = prev;
    if (prev === undefined && next !== undefined) {
      this.entry.due = next.due;
      this.entry.seq = next.seq;
    }
  }

  #fireHead(): void {
    const t = this.head!;
    this.unlink(t);
    // The next timer's turn in the event list (the entry was taken out to fire this one).
    if (this.head !== undefined) this.#clock.enter(this.entry);
    t.fn();
  }
}

/**
 * Test switch: drain promise callbacks after every event, as if every timer were set through
 * the `Clock` interface (results must not change; see `touch`).
 */
let drainAlways = false;

/** Sets the test switch (see {@link drainAlways}); not part of the public API. */
export function drainAfterEveryEvent(on: boolean): void {
  drainAlways = on;
}

/** Events fired between two yields to the event loop (so I/O and timers are not starved). */
const eventsPerYield = 20_000;

/**
 * Queues the microtask of each step: a `.then` on a settled promise costs about a quarter less
 * than `queueMicrotask`, which wraps every callback in an async resource (Node 20).
 */
const settled = Promise.resolve();

/** A clock for one simulated run. */
export class SimClock implements Clock {
  #now = 0;
  #seq = 0;
  #fired = 0;
  /** Whether the event firing now may have left promise callbacks to run (see `touch`). */
  #touched = false;
  readonly #heap: Event[] = [];
  #pending = 0;
  readonly #maxEvents: number;
  /** The first refusal of a timer for want of room: it fails the run, whoever caught it. */
  #overflow: SimEventsFullError | undefined;

  /** `maxEvents`: most events pending at once; one more is refused with {@link SimEventsFullError}. */
  constructor(maxEvents: number) {
    this.#maxEvents = maxEvents;
  }

  /** Events fired so far. */
  get fired(): number {
    return this.#fired;
  }

  /** Events pending now (a queue's timers each count). */
  get pending(): number {
    return this.#pending;
  }

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    // A fixed epoch (2026-01-01) so HTTP dates in a run do not depend on when it ran.
    return 1_767_225_600_000 + this.#now;
  }

  /** A timer of a real primitive: promise callbacks are drained after it fires. */
  setTimer(ms: number, fn: () => void): TimerHandle {
    return this.#set(ms, fn, 1);
  }

  /**
   * A timer of the simulator's own parts: `fn` runs no promise code unless it calls
   * {@link touch} first, so the next event may fire without a drain.
   */
  setOwnTimer(ms: number, fn: () => void): TimerHandle {
    return this.#set(ms, fn, 0);
  }

  /**
   * Says the event firing now has entered promise code (called a real primitive, settled a
   * promise): its callbacks are drained before the next event.
   */
  touch(): void {
    this.#touched = true;
  }

  #set(ms: number, fn: () => void, drains: 0 | 1): TimerHandle {
    this.#room();
    const e: Event = { due: this.#now + (ms > 0 ? ms : 0), seq: this.#seq + drains, fn, index: -1 };
    this.#seq += 2;
    this.enter(e);
    return e;
  }

  /** A queue for timers that all last `ms` (see {@link TimerQueue}). */
  queue(ms: number): TimerQueue {
    return new TimerQueue(this, ms > 0 ? ms : 0);
  }

  /** Sets a timer of `queue` (see {@link TimerQueue.set}). */
  queueTimer(queue: TimerQueue, fn: () => void): TimerHandle {
    this.#room();
    const t = new QueuedTimer(queue, fn, this.#now + queue.ms);
    // An own timer (see `setOwnTimer`).
    t.seq = this.#seq;
    this.#seq += 2;
    const tail = queue.tail;
    queue.tail = t;
    if (tail !== undefined) {
      tail.next = t;
      t.prev = tail;
      return t;
    }
    queue.head = t;
    queue.entry.due = t.due;
    queue.entry.seq = t.seq;
    this.enter(queue.entry);
    return t;
  }

  clearTimer(handle: TimerHandle): void {
    if (handle instanceof QueuedTimer) {
      if (!handle.pending) return;
      this.#pending--;
      const q = handle.queue;
      const first = q.head === handle;
      q.unlink(handle);
      // The queue's entry is keyed as its first timer: later now, or gone with the last.
      if (!first) return;
      if (q.head === undefined) this.#removeAt(q.entry.index);
      else this.#down(q.entry.index);
      return;
    }
    const e = handle as Event;
    const i = e.index;
    if (i >= 0 && this.#heap[i] === e) {
      this.#pending--;
      this.#removeAt(i);
    }
  }

  /** Puts `e` in the event list (a new timer, or a queue's entry for its next timer). */
  enter(e: Event): void {
    const heap = this.#heap;
    e.index = heap.length;
    heap.push(e);
    this.#up(e.index);
  }

  /** Counts one more pending timer, or refuses it when the list is full. */
  #room(): void {
    if (this.#pending >= this.#maxEvents)
      throw (this.#overflow ??= new SimEventsFullError(this.#maxEvents));
    this.#pending++;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  timeoutSignal(ms: number): AbortSignal {
    return timeoutSignalOn(this, ms);
  }

  /**
   * Fires events in due order (ties in the order they were set) up to `untilMs`, draining
   * promise callbacks after each; resolves with the clock at `untilMs`. Rejects with the
   * first error an event throws.
   */
  run(untilMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const heap = this.#heap;
      // Errors made in a run (every refusal is one) carry no stack: capturing one costs more
      // than the rest of a simulated request. Restored whenever other code may run.
      const stackTraceLimit = Error.stackTraceLimit;
      let sinceYield = 0;
      const step = (): void => {
        for (;;) {
          // An event list that overflowed fails the run, even where the primitive that set the
          // timer turned the throw into a failed request.
          if (this.#overflow !== undefined) {
            Error.stackTraceLimit = stackTraceLimit;
            reject(this.#overflow);
            return;
          }
          const e = heap[0];
          if (e === undefined || e.due > untilMs) {
            Error.stackTraceLimit = stackTraceLimit;
            if (untilMs > this.#now) this.#now = untilMs;
            resolve();
            return;
          }
          this.#removeAt(0);
          this.#pending--;
          this.#now = e.due;
          this.#fired++;
          this.#touched = drainAlways || (e.seq & 1) === 1;
          try {
            e.fn();
          } catch (error) {
            Error.stackTraceLimit = stackTraceLimit;
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown
            reject(error);
            return;
          }
          if (++sinceYield >= eventsPerYield) {
            sinceYield = 0;
            // Drained first, then the event loop gets a turn.
            void settled.then(() => process.nextTick(yieldThenStep));
            return;
          }
          if (this.#touched) {
            void settled.then(drainThenStep);
            return;
          }
          // Nothing to drain: the next event at once.
        }
      };
      // Queued from a microtask, a tick runs only when the microtask queue is empty.
      const drainThenStep = (): void => process.nextTick(step);
      const yieldThenStep = (): void => {
        Error.stackTraceLimit = stackTraceLimit;
        setImmediate(() => {
          Error.stackTraceLimit = 0;
          void settled.then(drainThenStep);
        });
      };
      Error.stackTraceLimit = 0;
      void settled.then(drainThenStep);
    });
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

  #up(i: number): void {
    const heap = this.#heap;
    const e = heap[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = heap[p]!;
      if (parent.due < e.due || (parent.due === e.due && parent.seq < e.seq)) break;
      heap[i] = parent;
      parent.index = i;
      i = p;
    }
    heap[i] = e;
    e.index = i;
  }

  #down(i: number): void {
    const heap = this.#heap;
    const n = heap.length;
    const e = heap[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      const r = c + 1;
      if (r < n && less(heap[r]!, heap[c]!)) c = r;
      if (!less(heap[c]!, e)) break;
      heap[i] = heap[c]!;
      heap[i]!.index = i;
      i = c;
    }
    heap[i] = e;
    e.index = i;
  }
}

function less(a: Event, b: Event): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}
