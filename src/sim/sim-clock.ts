/**
 * The simulator's clock: a {@link Clock} whose time jumps from one event to the next, with a
 * bounded event list. Between two events every pending promise callback runs, so the real
 * primitives (promise-based `dependency().call`, `concurrencyLimit().acquire`) see time exactly
 * as they would in real life — a callback that sets a timer sets it at the instant it woke.
 *
 * How the callbacks are drained without a trip through the event loop: the loop's next step is
 * queued with `process.nextTick` from inside a microtask, and Node runs the tick queue only once
 * the microtask queue is empty (microtasks queued by microtasks included). That costs a
 * microtask and a tick per event instead of an event-loop turn (`setImmediate`): the event
 * list alone fires about three million events a second; `spillway/testing`'s virtual clock
 * flushes with `setImmediate` and is measured beside this one in `bench/sim.js`.
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

interface Event {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
  index: number;
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
  readonly #heap: Event[] = [];
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

  /** Events pending now. */
  get pending(): number {
    return this.#heap.length;
  }

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    // A fixed epoch (2026-01-01) so HTTP dates in a run do not depend on when it ran.
    return 1_767_225_600_000 + this.#now;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const heap = this.#heap;
    if (heap.length >= this.#maxEvents)
      throw (this.#overflow ??= new SimEventsFullError(this.#maxEvents));
    const e: Event = {
      due: this.#now + (ms > 0 ? ms : 0),
      seq: this.#seq++,
      fn,
      index: heap.length,
    };
    heap.push(e);
    this.#up(e.index);
    return e;
  }

  clearTimer(handle: TimerHandle): void {
    const e = handle as Event;
    const i = e.index;
    if (i >= 0 && this.#heap[i] === e) this.#removeAt(i);
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
        this.#now = e.due;
        this.#fired++;
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
        } else void settled.then(drainThenStep);
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
