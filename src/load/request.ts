/**
 * One request of a run, through all its attempts, the group it belongs to, and the list of
 * requests in flight that recycles them. Plain records with every field set from the start,
 * so every request has one shape.
 *
 * @module
 */
import type { Connection } from './connection.js';
import type { NoConnection } from './connection-pool.js';
import type { DeadlineEntry, DeadlineQueue } from './deadline-queue.js';
import type { ResolvedGroup } from './options.js';
import type { Outcome } from './outcome.js';
import type { GroupRecorder } from './recorder.js';
import type { Arrival } from './schedule.js';

/** What a request needs of its group. */
export interface RequestGroup {
  readonly config: ResolvedGroup;
  readonly recorder: GroupRecorder;
  /** Deadlines of this group's attempts in flight (one deadline per group keeps it ordered). */
  readonly deadlines: DeadlineQueue<Request>;
}

/**
 * One request, through all its attempts. Requests are recycled once finished: at 20,000 a
 * second a fresh object each made V8 pretenure them (after the warm-up, most survived a young
 * collection), so every request became old-generation garbage and the full collections that
 * swept them paused the schedule.
 */
export interface Request extends DeadlineEntry {
  group: RequestGroup;
  bytes: Buffer;
  /** Sent in the warm-up: nothing about it is recorded. */
  warm: boolean;
  /** Intended send time of the first attempt (ms after the run's start). */
  intendedAt: number;
  attempts: number;
  /** The current attempt's deadline counts from here. */
  attemptStart: number;
  sentAt: number;
  /** The retry timer while the request waits to retry. */
  timer: NodeJS.Timeout | undefined;
  connection: Connection | undefined;
  staleRetried: boolean;
  waitingRetry: boolean;
  /** When the retry being waited for may go (the generator's clock). */
  retryAt: number;
  lastOutcome: Outcome;
  lastStatus: number;
  lastRetryAfterMs: number | undefined;
  lastReason: string;
  /** Where it sits in the run's list of requests in flight. */
  liveIndex: number;
}

/**
 * The requests in flight, unordered (each knows its index, so removal is a swap), and the
 * finished ones kept for reuse (never more than the in-flight cap).
 */
export class LiveRequests {
  readonly #live: Request[] = [];
  readonly #spare: Request[] = [];
  readonly #maxSpare: number;

  constructor(maxSpare: number) {
    this.#maxSpare = maxSpare;
  }

  /** Requests in flight. */
  get count(): number {
    return this.#live.length;
  }

  /** A request for `arrival`, before its first attempt, now in flight. */
  start(group: RequestGroup, arrival: Arrival, now: number): Request {
    const request = this.#spare.pop() ?? blankRequest();
    request.group = group;
    request.bytes = arrival.bytes;
    request.warm = arrival.warm;
    request.intendedAt = arrival.intendedAt;
    request.attempts = 0;
    request.attemptStart = arrival.intendedAt;
    request.sentAt = now;
    request.staleRetried = false;
    request.lastOutcome = 'dropped';
    request.lastStatus = 0;
    request.lastRetryAfterMs = undefined;
    request.lastReason = '';
    request.liveIndex = this.#live.length;
    this.#live.push(request);
    return request;
  }

  /** Takes the request out of flight and keeps it for reuse (nothing refers to it any more). */
  remove(request: Request): void {
    const live = this.#live;
    const last = live.pop()!;
    if (last !== request) {
      live[request.liveIndex] = last;
      last.liveIndex = request.liveIndex;
    }
    request.liveIndex = -1;
    request.connection = undefined;
    request.timer = undefined;
    if (this.#spare.length < this.#maxSpare) this.#spare.push(request);
  }

  /** The requests in flight now (a copy: ending them removes them). */
  snapshot(): Request[] {
    return [...this.#live];
  }
}

/** A request with every field set, so all requests share one shape. */
function blankRequest(): Request {
  return {
    group: undefined as unknown as RequestGroup,
    bytes: emptyBytes,
    warm: false,
    intendedAt: 0,
    attempts: 0,
    attemptStart: 0,
    sentAt: 0,
    timer: undefined,
    deadlineAt: 0,
    prevDeadline: undefined,
    nextDeadline: undefined,
    inDeadlines: false,
    connection: undefined,
    staleRetried: false,
    waitingRetry: false,
    retryAt: 0,
    lastOutcome: 'dropped',
    lastStatus: 0,
    lastRetryAfterMs: undefined,
    lastReason: '',
    liveIndex: -1,
  };
}

const emptyBytes = Buffer.alloc(0);

/** Why an arrival was dropped (the keys of `droppedByReason`). */
export type DropReason = NoConnection | 'in-flight cap' | 'deadline passed';

/** Records an arrival that was never sent, with its group. */
export function recordDropped(group: RequestGroup, reason: DropReason): void {
  group.recorder.finished({
    outcome: 'dropped',
    latencyMs: 0,
    good: false,
    status: 0,
    retryAfterMs: undefined,
    reason,
    fromSendMs: 0,
  });
}
