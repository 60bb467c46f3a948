/**
 * The requests in flight and the connections they travel on: each arrival the schedule hands
 * over becomes a request (or a `dropped` outcome), goes out, waits for its answer, its deadline
 * or its retry, and ends as exactly one outcome, recorded by its group. Latency runs from the
 * moment the request *should* have been sent, so a connection slow to open shows up as latency.
 *
 * @module
 */
import { parseRetryAfter } from '../http/codecs.js';
import type { Connection, Target } from './connection.js';
import { ConnectionPool, type PoolListener } from './connection-pool.js';
import { DeadlineQueue } from './deadline-queue.js';
import type { ResolvedOptions } from './options.js';
import { outcomeOfStatus, type Outcome } from './outcome.js';
import type { GroupRecorder } from './recorder.js';
import { LiveRequests, recordDropped, type Request, type RequestGroup } from './request.js';
import { retryDelayMs } from './retry-policy.js';
import type { Arrival } from './schedule.js';
import { armTimer } from './timer.js';
import { seededRandom } from './arrivals.js';

/** How an attempt ended. */
interface AttemptEnd {
  readonly outcome: Outcome;
  readonly status: number;
  readonly retryAfterMs: number | undefined;
  readonly reason: string;
}

/** Options of {@link InFlight}. */
export interface InFlightOptions {
  readonly options: ResolvedOptions;
  /** The target, its host resolved to an address. */
  readonly target: Target;
  /** One per group, in the order of `options.groups`. */
  readonly recorders: readonly GroupRecorder[];
  /** The run's clock: ms after the measured start. */
  readonly now: () => number;
  /** Latency of each `ok` request, for the current window's percentiles. */
  readonly onOk: (latencyMs: number) => void;
  /** Each answer read (the schedule may send an arrival due meanwhile). */
  readonly onAnswer: () => void;
  /** The last request ended after {@link InFlight.drainUntil}. */
  readonly onIdle: () => void;
  /** The latest moment a retry can still be sent, until the drain says otherwise. */
  readonly lastSendMs: number;
}

export class InFlight implements PoolListener {
  /** The connections requests travel on. */
  readonly pool: ConnectionPool;
  readonly #now: () => number;
  readonly #maxInFlight: number;
  readonly #groups: readonly RequestGroup[];
  readonly #random: () => number;
  readonly #onOk: (latencyMs: number) => void;
  readonly #onAnswer: () => void;
  readonly #onIdle: () => void;
  readonly #live: LiveRequests;
  #lastSendMs: number;
  #draining = false;
  #ended = false;
  #staleReconnects = 0;

  constructor(input: InFlightOptions) {
    const o = input.options;
    this.#now = input.now;
    this.#maxInFlight = o.maxInFlight;
    this.#live = new LiveRequests(o.maxInFlight);
    this.#random = seededRandom(o.seed ^ 0x5bd1e995);
    this.#onOk = input.onOk;
    this.#onAnswer = input.onAnswer;
    this.#onIdle = input.onIdle;
    this.#lastSendMs = input.lastSendMs;
    this.#groups = o.groups.map((config) => ({
      config,
      recorder: input.recorders[config.index]!,
      deadlines: new DeadlineQueue<Request>(input.now, this.#onDeadline),
    }));
    this.pool = new ConnectionPool({
      target: input.target,
      maxConnections: o.maxConnections,
      reuse: o.connection === 'keep-alive',
      idleTimeoutMs: o.idleTimeoutMs,
      reserve: o.warmConnections,
      maxNewPerSec: o.maxNewConnectionsPerSec,
      connectBurst: o.connectBurst,
      listener: this,
    });
  }

  /** Requests in flight, those waiting to retry included. */
  get count(): number {
    return this.#live.count;
  }

  /** Requests re-sent on a fresh connection because a pooled one had gone stale. */
  get staleReconnects(): number {
    return this.#staleReconnects;
  }

  /** Takes an arrival: sends it, or drops it at the in-flight cap or past its deadline. */
  admit(arrival: Arrival, now: number): void {
    const g = this.#groups[arrival.group.index]!;
    const warm = arrival.warm;
    if (this.#live.count >= this.#maxInFlight) {
      if (!warm) recordDropped(g, 'in-flight cap');
      return;
    }
    const deadlineMs = g.config.deadlineMs;
    if (deadlineMs > 0 && now - arrival.intendedAt >= deadlineMs) {
      if (!warm) recordDropped(g, 'deadline passed');
      return;
    }
    const request = this.#live.start(g, arrival, now);
    this.#send(request, now);
  }

  /** Writes the request's next attempt, or ends it when no connection can be had. */
  #send(request: Request, now: number): void {
    const connection = this.pool.acquire(now);
    const g = request.group;
    if (typeof connection === 'string') {
      if (request.attempts === 0) {
        this.#live.remove(request);
        if (!request.warm) recordDropped(g, connection);
      } else {
        g.recorder.attemptEnded('dropped');
        this.#finish(request, now);
      }
      return;
    }
    request.attempts++;
    if (!request.warm) g.recorder.attempt(request.attempts > 1);
    request.connection = connection;
    request.sentAt = now;
    const deadlineMs = g.config.deadlineMs;
    if (deadlineMs > 0) g.deadlines.add(request, request.attemptStart + deadlineMs);
    connection.send(request.bytes, g.config.noBody, request);
  }

  /** The attempt's deadline passed (never before it: the queue checks the clock). */
  readonly #onDeadline = (request: Request): void => {
    const connection = request.connection;
    request.connection = undefined;
    connection?.destroy();
    this.#attemptEnded(request, {
      outcome: 'timeout',
      status: 0,
      retryAfterMs: undefined,
      reason: '',
    });
  };

  onResponse(connection: Connection, token: unknown): void {
    const request = token as Request;
    request.group.deadlines.remove(request);
    request.connection = undefined;
    const { status, retryAfter } = connection.parser;
    this.pool.release(connection, this.#now());
    const outcome = outcomeOfStatus(status);
    const retryAfterMs =
      outcome === 'rejected' && retryAfter !== undefined
        ? parseRetryAfter(retryAfter, Date.now())
        : undefined;
    this.#attemptEnded(request, { outcome, status, retryAfterMs, reason: '' });
    this.#onAnswer();
  }

  onFailure(connection: Connection, token: unknown, reason: string): void {
    const request = token as Request;
    if (connection.reused && connection.parser.received === 0 && !request.staleRetried) {
      // A pooled connection the server had already closed: what any keep-alive client does is
      // send again on a fresh one, once; it is not the server refusing this request.
      request.staleRetried = true;
      const fresh = this.pool.acquire(this.#now(), true);
      if (typeof fresh !== 'string') {
        this.#staleReconnects++;
        request.connection = fresh;
        fresh.send(request.bytes, request.group.config.noBody, request);
        return;
      }
    }
    request.group.deadlines.remove(request);
    request.connection = undefined;
    this.#attemptEnded(request, { outcome: 'network', status: 0, retryAfterMs: undefined, reason });
  }

  #attemptEnded(request: Request, end: AttemptEnd): void {
    const g = request.group;
    if (!request.warm) g.recorder.attemptEnded(end.outcome);
    request.lastOutcome = end.outcome;
    request.lastStatus = end.status;
    request.lastRetryAfterMs = end.retryAfterMs;
    request.lastReason = end.reason;
    const now = this.#now();
    if (!this.#ended && !request.warm && g.config.retry.kind !== 'none' && end.outcome !== 'ok') {
      const delay = retryDelayMs(
        g.config.retry,
        {
          attempt: request.attempts,
          outcome: end.outcome,
          status: end.status,
          retryAfterMs: end.retryAfterMs,
        },
        this.#random,
      );
      // A retry due after the run can no longer send (a long Retry-After) is not waited for:
      // this caller gives up now, as it would when told to come back after it has gone.
      if (delay !== undefined && now + delay < this.#lastSendMs) {
        if (delay <= 0) {
          request.attemptStart = now;
          this.#send(request, now);
        } else {
          request.waitingRetry = true;
          request.retryAt = now + delay;
          request.timer = armTimer(this.#retry, delay, request);
        }
        return;
      }
    }
    this.#finish(request, now);
  }

  readonly #retry = (request: Request): void => {
    const now = this.#now();
    // Node's timers count whole milliseconds of the event loop's time and may fire up to 1 ms
    // before the delay has passed on this clock: a retry never goes before its Retry-After.
    if (now < request.retryAt) {
      request.timer = armTimer(this.#retry, request.retryAt - now, request);
      return;
    }
    request.waitingRetry = false;
    request.timer = undefined;
    request.attemptStart = now;
    this.#send(request, now);
  };

  /** The request is over; its outcome is that of its last attempt. */
  #finish(request: Request, now: number): void {
    this.#live.remove(request);
    if (!request.warm) {
      const g = request.group;
      const outcome = request.lastOutcome;
      const latencyMs = now - request.intendedAt;
      const ok = outcome === 'ok';
      g.recorder.finished({
        outcome,
        latencyMs,
        good: ok && latencyMs <= g.config.goodWithinMs,
        status: request.lastStatus,
        retryAfterMs: request.lastRetryAfterMs,
        reason: request.lastReason,
        fromSendMs: now - request.sentAt,
      });
      if (ok) this.#onOk(latencyMs);
    }
    if (this.#draining && this.#live.count === 0) this.#onIdle();
  }

  /**
   * The schedule has ended: nothing is sent after `endMs`. Retries due after it will never be
   * sent, so those callers give up now, and a run whose only requests left are such retries
   * ends at once (`onIdle`) instead of waiting out the drain.
   */
  drainUntil(endMs: number, now: number): void {
    this.#draining = true;
    this.#lastSendMs = endMs;
    for (const request of this.#live.snapshot()) {
      if (request.waitingRetry && request.retryAt >= endMs) {
        clearTimeout(request.timer);
        request.waitingRetry = false;
        this.#finish(request, now);
      }
    }
  }

  /** Ends every request: whatever is still in flight has run out of time. */
  endAll(now: number): void {
    this.#ended = true;
    for (const g of this.#groups) g.deadlines.clear();
    for (const request of this.#live.snapshot()) {
      clearTimeout(request.timer);
      if (request.waitingRetry) {
        request.waitingRetry = false;
      } else {
        request.connection?.destroy();
        request.connection = undefined;
        if (!request.warm) request.group.recorder.attemptEnded('timeout');
        request.lastOutcome = 'timeout';
        request.lastStatus = 0;
        request.lastRetryAfterMs = undefined;
      }
      this.#finish(request, now);
    }
  }
}
