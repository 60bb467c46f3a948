/**
 * The arrival schedule of a run: when each group's next request is due (its warm-up, then its
 * measured schedule), and the tick that hands over whatever is due. It ignores the server
 * (open loop) and knows nothing of requests: each arrival goes to `onArrival`, and the
 * measurement windows say where a batch of sends pauses to close a window.
 *
 * @module
 */
import { arrivalSchedule } from './arrivals.js';
import type { ResolvedGroup, ResolvedOptions } from './options.js';
import { armTimer } from './timer.js';

/** Longest run of sends before I/O is let in (a batch of late arrivals is sent in slices). */
const sliceMs = 1;

/**
 * One arrival, as handed to `onArrival`. The record is reused for every arrival (no garbage
 * per request), so read it before the next one.
 */
export interface Arrival {
  group: ResolvedGroup;
  /** When it should have been sent (ms after the measured start; negative in the warm-up). */
  intendedAt: number;
  /** Sent in the warm-up: nothing about it is recorded. */
  warm: boolean;
  /** The serialised request of the next client identity of the group. */
  bytes: Buffer;
}

/** What the schedule needs of the measurement windows. */
export interface WindowBoundary {
  /** When the current window ends (ms after the measured start). */
  readonly endMs: number;
  /** Closes the current window; `endMs` moves to the next one's end. */
  close(): void;
}

/** Options of {@link Schedule}. */
export interface ScheduleOptions {
  readonly options: ResolvedOptions;
  /** The run's clock: ms after the measured start. */
  readonly now: () => number;
  readonly windows: WindowBoundary;
  /** Takes one arrival (`now` is the moment it goes). */
  readonly onArrival: (arrival: Arrival, now: number) => void;
  /** Every group's schedule has ended. */
  readonly onEnd: () => void;
}

interface GroupSchedule {
  readonly config: ResolvedGroup;
  readonly next: () => number;
  /** The warm-up's own schedule while the group is warming up, then `undefined`. */
  warmNext: (() => number) | undefined;
  /**
   * Next intended send time, ms after the measured start (negative in the warm-up);
   * Infinity when the group is done.
   */
  nextAt: number;
  count: number;
  client: number;
}

export class Schedule {
  readonly #now: () => number;
  readonly #warmupMs: number;
  readonly #windows: WindowBoundary;
  readonly #onArrival: (arrival: Arrival, now: number) => void;
  readonly #onEnd: () => void;
  readonly #groups: GroupSchedule[];
  readonly #arrival: Arrival;
  /** When the last group's schedule ends at the latest (ms after the measured start). */
  readonly endMs: number;
  #tickTimer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  /** Earliest intended time of an arrival not yet sent (as of the last tick). */
  #dueAt = Number.POSITIVE_INFINITY;
  #done = false;

  constructor(input: ScheduleOptions) {
    const { options } = input;
    this.#now = input.now;
    this.#warmupMs = options.warmupMs;
    this.#windows = input.windows;
    this.#onArrival = input.onArrival;
    this.#onEnd = input.onEnd;
    const schedule = (config: ResolvedGroup, seed: number): (() => number) =>
      arrivalSchedule({ arrival: config.arrival, ratePerSec: config.ratePerSec, seed });
    this.#groups = options.groups.map((config) => ({
      config,
      next: schedule(config, options.seed + config.index * 7919),
      // Groups that start with the run and are not a fixed number of requests (a canary)
      // also run in the warm-up, at their own rate.
      warmNext:
        options.warmupMs > 0 && config.startMs === 0 && config.maxRequests === Infinity
          ? schedule(config, options.seed + config.index * 7919 + 1)
          : undefined,
      nextAt: 0,
      count: 0,
      client: 0,
    }));
    this.endMs = Math.max(...options.groups.map((g) => g.startMs + g.durationMs));
    for (const g of this.#groups) {
      g.nextAt =
        g.warmNext === undefined ? g.config.startMs + g.next() : g.warmNext() - options.warmupMs;
    }
    const first = options.groups[0]!;
    this.#arrival = { group: first, intendedAt: 0, warm: false, bytes: first.requests[0]! };
  }

  /** The schedule has ended (every group done, or stopped). */
  get done(): boolean {
    return this.#done;
  }

  /** Starts sending (the run's clock must be running). */
  start(): void {
    this.#tick();
  }

  /** Stops for good: nothing more is handed over. */
  stop(): void {
    this.#done = true;
    this.#cancelTick();
  }

  /** Runs the tick now (a window ended: send what is still due in it, then close it). */
  tickNow(): void {
    this.#cancelTick();
    this.#tick();
  }

  /**
   * Sends every arrival that is due, then sleeps until the next one. A batch of late arrivals
   * (after a stall) is sent in slices of at most `sliceMs`, with I/O let in between: responses
   * read meanwhile hand their connections back, so the batch reuses them instead of opening
   * new ones, and the answers' latency is not held up behind the batch.
   */
  readonly #tick = (): void => {
    this.#tickTimer = undefined;
    const sliceEnd = this.#now() + sliceMs;
    const windows = this.#windows;
    // Arrivals count in the window of their intended time: send what is due in the current
    // window, close it when its end has passed, and go on with the next.
    let caughtUp: boolean;
    for (;;) {
      caughtUp = this.#sendDue(windows.endMs, sliceEnd);
      if (!caughtUp || this.#now() < windows.endMs) break;
      windows.close();
    }
    const earliest = this.#earliestArrival();
    if (earliest === Number.POSITIVE_INFINITY) {
      this.#onEnd();
      return;
    }
    this.#dueAt = earliest;
    const wait = caughtUp ? earliest - this.#now() : 0;
    // Timers have ~1 ms granularity: whatever falls due meanwhile goes out in the next batch,
    // and its lateness is measured as schedule lag, never hidden.
    this.#tickTimer = wait <= 0 ? setImmediate(this.#tick) : armTimer(this.#tick, wait);
  };

  #earliestArrival(): number {
    let earliest = Number.POSITIVE_INFINITY;
    for (const g of this.#groups) if (g.nextAt < earliest) earliest = g.nextAt;
    return earliest;
  }

  #cancelTick(): void {
    if (this.#tickTimer === undefined) return;
    clearTimeout(this.#tickTimer as NodeJS.Timeout);
    clearImmediate(this.#tickTimer as NodeJS.Immediate);
    this.#tickTimer = undefined;
  }

  /**
   * Sends arrivals due by now and intended before `beforeMs`, until `sliceEnd`. Returns whether
   * it caught up (false: time ran out with arrivals still due).
   */
  #sendDue(beforeMs: number, sliceEnd: number): boolean {
    let now = this.#now();
    for (const g of this.#groups) {
      while (g.nextAt <= now && g.nextAt < beforeMs) {
        if (now >= sliceEnd) return false;
        this.#arrive(g, now);
        now = this.#now();
      }
    }
    return true;
  }

  /**
   * While the loop reads a burst of answers (after the server paused, hundreds arrive in one
   * poll), the tick's timer cannot fire: an arrival that fell due meanwhile goes out from here,
   * one per answer, on the connection that answer just freed, so a burst of reading does not
   * become schedule lag and a backlog still goes out no faster than connections come free.
   * One clock read per answer.
   */
  sendWhileReading(): void {
    if (this.#tickTimer === undefined || this.#done) return;
    const now = this.#now();
    if (now < this.#dueAt) return;
    let due: GroupSchedule | undefined;
    const beforeMs = this.#windows.endMs;
    for (const g of this.#groups) {
      if (g.nextAt <= now && g.nextAt < beforeMs && (due === undefined || g.nextAt < due.nextAt))
        due = g;
    }
    if (due !== undefined) this.#arrive(due, now);
    this.#dueAt = this.#earliestArrival();
  }

  /** Takes the group's next arrival, moves its schedule on, and hands the arrival over. */
  #arrive(g: GroupSchedule, now: number): void {
    const intendedAt = g.nextAt;
    const { config } = g;
    const warm = g.warmNext !== undefined;
    if (g.warmNext !== undefined) {
      const offset = g.warmNext() - this.#warmupMs;
      if (offset < 0) g.nextAt = offset;
      else {
        // The warm-up is over: the measured schedule starts at 0.
        g.warmNext = undefined;
        g.nextAt = g.next();
      }
    } else {
      g.count++;
      if (g.count >= config.maxRequests) g.nextAt = Number.POSITIVE_INFINITY;
      else {
        const offset = g.next();
        g.nextAt = offset < config.durationMs ? config.startMs + offset : Number.POSITIVE_INFINITY;
      }
    }
    const arrival = this.#arrival;
    arrival.group = config;
    arrival.intendedAt = intendedAt;
    arrival.warm = warm;
    arrival.bytes = config.requests[g.client]!;
    g.client = g.client + 1 === config.clients ? 0 : g.client + 1;
    this.#onArrival(arrival, now);
  }
}
