/**
 * The open-loop generator. Arrivals follow a schedule that ignores the server (constant or
 * Poisson, per group); each request's latency runs from the moment it *should* have been sent,
 * so a generator that falls behind, or a connection that is slow to open, shows up as latency
 * instead of disappearing (coordinated omission). Every request ends as exactly one outcome.
 *
 * @module
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { arch, cpus, loadavg } from 'node:os';
import { performance, type RecordableHistogram } from 'node:perf_hooks';
import { arrivalSchedule, seededRandom } from './arrivals.js';
import type { Connection } from './connection.js';
import { DeadlineQueue, type DeadlineEntry } from './deadline-queue.js';
import { ConnectionPool, type NoConnection, type PoolListener } from './connection-pool.js';
import { latencyHistogram, percentileMs, recordMs } from './latency-histogram.js';
import {
  resolveOptions,
  type LoadOptions,
  type ResolvedGroup,
  type ResolvedOptions,
} from './options.js';
import { outcomeOfStatus, type Outcome } from './outcome.js';
import { buildStats, emptyCounts, GroupRecorder } from './recorder.js';
import type { LoadProgress, LoadResult, WindowCounts, WindowStats } from './result.js';
import { parseRetryAfterMs } from './retry-after.js';
import { formatRetryPolicy, retryDelayMs } from './retry-policy.js';
import { armTimer } from './timer.js';
import { assessValidity } from './validity.js';

/**
 * Runs one open-loop load test and resolves with its measurements. Rejects only for bad
 * options or an unresolvable host; every failure of the target is an outcome, not an error.
 *
 * @example
 * ```ts
 * const result = await runLoad({ url: 'http://127.0.0.1:3000/', ratePerSec: 500, durationMs: 5000, deadlineMs: 1000 });
 * console.log(result.totals.goodputPerSec, result.totals.latencyMs.ok?.p99, result.validity.valid);
 * ```
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const resolved = resolveOptions(options);
  const host = isIP(resolved.host) === 0 ? (await lookup(resolved.host)).address : resolved.host;
  const run = new LoadRun(resolved, options, host);
  await run.warm();
  return run.run();
}

/** Longest run of sends before I/O is let in (a batch of late arrivals is sent in slices). */
const sliceMs = 1;

interface GroupState {
  readonly config: ResolvedGroup;
  readonly recorder: GroupRecorder;
  readonly next: () => number;
  /** Deadlines of this group's attempts in flight (one deadline per group keeps it ordered). */
  readonly deadlines: DeadlineQueue<Request>;
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

/** Why an arrival was dropped (the keys of `droppedByReason`). */
type DropReason = NoConnection | 'in-flight cap' | 'deadline passed';

/**
 * One request, through all its attempts. Requests are recycled once finished: at 20,000 a
 * second a fresh object each made V8 pretenure them (after the warm-up, most survived a young
 * collection), so every request became old-generation garbage and the full collections that
 * swept them paused the schedule.
 */
interface Request extends DeadlineEntry {
  group: GroupState;
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

class LoadRun implements PoolListener {
  readonly #o: ResolvedOptions;
  readonly #input: LoadOptions;
  readonly #groups: GroupState[];
  readonly #pool: ConnectionPool;
  readonly #random: () => number;
  readonly #lag = latencyHistogram();
  readonly #windowLag = latencyHistogram();
  readonly #windowOk = latencyHistogram();
  readonly #windows: WindowStats[] = [];
  /** Requests in flight, unordered (each knows its index, so removal is a swap). */
  readonly #live: Request[] = [];
  /** Finished requests kept for reuse; never more than the in-flight cap. */
  readonly #spare: Request[] = [];
  #windowsDropped = 0;
  #windowIndex = 0;
  #windowEndMs = 1000;
  #staleReconnects = 0;
  #t0 = 0;
  #startedAt = '';
  #cpu0: NodeJS.CpuUsage = { user: 0, system: 0 };
  #cpuPercent = 0;
  #scheduleDone = false;
  #ended = false;
  #aborted = false;
  #tickTimer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  /** Earliest intended time of an arrival not yet sent (as of the last tick). */
  #dueAt = Number.POSITIVE_INFINITY;
  #measureTimer: NodeJS.Timeout | undefined;
  #windowTimer: NodeJS.Timeout | undefined;
  #drainTimer: NodeJS.Timeout | undefined;
  /** When the last group's schedule ends at the latest (ms after the measured start). */
  readonly #scheduleEndMs: number;
  /** When the drain ends, once the schedule has ended. */
  #drainEndMs = Number.POSITIVE_INFINITY;
  #resolve: (result: LoadResult) => void = () => undefined;

  constructor(options: ResolvedOptions, input: LoadOptions, address: string) {
    this.#o = options;
    this.#input = input;
    this.#random = seededRandom(options.seed ^ 0x5bd1e995);
    const schedule = (config: ResolvedGroup, seed: number): (() => number) =>
      arrivalSchedule({ arrival: config.arrival, ratePerSec: config.ratePerSec, seed });
    this.#groups = options.groups.map((config) => ({
      config,
      recorder: new GroupRecorder(config.name, config.ratePerSec),
      deadlines: new DeadlineQueue<Request>(() => this.#now(), this.#onDeadline),
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
    this.#scheduleEndMs = Math.max(...options.groups.map((g) => g.startMs + g.durationMs));
    for (const g of this.#groups) {
      g.nextAt =
        g.warmNext === undefined ? g.config.startMs + g.next() : g.warmNext() - options.warmupMs;
    }
    this.#pool = new ConnectionPool({
      target: { host: address, port: options.port },
      maxConnections: options.maxConnections,
      reuse: options.connection === 'keep-alive',
      idleTimeoutMs: options.idleTimeoutMs,
      reserve: options.warmConnections,
      maxNewPerSec: options.maxNewConnectionsPerSec,
      connectBurst: options.connectBurst,
      listener: this,
    });
  }

  /** Opens the warm connections (bounded in time; failures surface later as outcomes). */
  warm(): Promise<void> {
    return this.#pool.warm(this.#o.warmConnections, 5000, -this.#o.warmupMs);
  }

  run(): Promise<LoadResult> {
    return new Promise((resolve) => {
      this.#resolve = resolve;
      // Time runs from the measured start; the warm-up, if any, is the time before it.
      this.#t0 = performance.now() + this.#o.warmupMs;
      if (this.#o.warmupMs > 0) {
        this.#measureTimer = armTimer(this.#startMeasuring, this.#o.warmupMs);
      } else this.#startMeasuring();
      this.#windowTimer = armTimer(this.#onWindowTimer, this.#windowEndMs - this.#now());
      const signal = this.#input.signal;
      if (signal?.aborted === true) {
        this.#abort();
        return;
      }
      signal?.addEventListener('abort', this.#abort, { once: true });
      this.#tick();
    });
  }

  #now(): number {
    return performance.now() - this.#t0;
  }

  readonly #startMeasuring = (): void => {
    this.#measureTimer = undefined;
    this.#startedAt = new Date().toISOString();
    this.#cpu0 = process.cpuUsage();
  };

  readonly #abort = (): void => {
    if (this.#scheduleDone) return;
    this.#aborted = true;
    this.#endSchedule();
  };

  /**
   * Sends every arrival that is due, then sleeps until the next one. A batch of late arrivals
   * (after a stall) is sent in slices of at most `sliceMs`, with I/O let in between: responses
   * read meanwhile hand their connections back, so the batch reuses them instead of opening
   * new ones, and the answers' latency is not held up behind the batch.
   */
  readonly #tick = (): void => {
    this.#tickTimer = undefined;
    const sliceEnd = this.#now() + sliceMs;
    // Arrivals count in the window of their intended time: send what is due in the current
    // window, close it when its end has passed, and go on with the next.
    let caughtUp: boolean;
    for (;;) {
      caughtUp = this.#sendDue(this.#windowEndMs, sliceEnd);
      if (!caughtUp || this.#now() < this.#windowEndMs) break;
      this.#closeWindow();
    }
    const earliest = this.#earliestArrival();
    if (earliest === Number.POSITIVE_INFINITY) {
      this.#endSchedule();
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

  #arrive(g: GroupState, now: number): void {
    const intendedAt = g.nextAt;
    const { config, recorder } = g;
    const warm = g.warmNext !== undefined;
    if (g.warmNext !== undefined) {
      const offset = g.warmNext() - this.#o.warmupMs;
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
    const lagMs = now - intendedAt;
    if (!warm) {
      recorder.offered();
      recordMs(this.#lag, lagMs);
      recordMs(this.#windowLag, lagMs);
    }
    const bytes = config.requests[g.client]!;
    g.client = g.client + 1 === config.clients ? 0 : g.client + 1;
    if (this.#live.length >= this.#o.maxInFlight) {
      if (!warm) this.#dropped(g, 'in-flight cap');
      return;
    }
    if (config.deadlineMs > 0 && lagMs >= config.deadlineMs) {
      if (!warm) this.#dropped(g, 'deadline passed');
      return;
    }
    const request = this.#spare.pop() ?? blankRequest();
    request.group = g;
    request.bytes = bytes;
    request.warm = warm;
    request.intendedAt = intendedAt;
    request.attempts = 0;
    request.attemptStart = intendedAt;
    request.sentAt = now;
    request.staleRetried = false;
    request.lastOutcome = 'dropped';
    request.lastStatus = 0;
    request.lastRetryAfterMs = undefined;
    request.lastReason = '';
    this.#addLive(request);
    this.#send(request, now);
  }

  #dropped(g: GroupState, reason: DropReason): void {
    g.recorder.finished({
      outcome: 'dropped',
      latencyMs: 0,
      good: false,
      status: 0,
      retryAfterMs: undefined,
      reason,
      fromSendMs: 0,
    });
  }

  /** Writes the request's next attempt, or ends it when no connection can be had. */
  #send(request: Request, now: number): void {
    const connection = this.#pool.acquire(now);
    const g = request.group;
    if (typeof connection === 'string') {
      if (request.attempts === 0) {
        this.#removeLive(request);
        if (!request.warm) this.#dropped(g, connection);
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
    this.#pool.release(connection, this.#now());
    const outcome = outcomeOfStatus(status);
    const retryAfterMs =
      outcome === 'rejected' && retryAfter !== undefined
        ? parseRetryAfterMs(retryAfter, Date.now())
        : undefined;
    this.#attemptEnded(request, { outcome, status, retryAfterMs, reason: '' });
    this.#sendWhileReading();
  }

  /**
   * While the loop reads a burst of answers (after the server paused, hundreds arrive in one
   * poll), the tick's timer cannot fire: an arrival that fell due meanwhile goes out from here,
   * one per answer, on the connection that answer just freed, so a burst of reading does not
   * become schedule lag and a backlog still goes out no faster than connections come free.
   * One clock read per answer.
   */
  #sendWhileReading(): void {
    if (this.#tickTimer === undefined || this.#scheduleDone) return;
    const now = this.#now();
    if (now < this.#dueAt) return;
    let due: GroupState | undefined;
    for (const g of this.#groups) {
      if (
        g.nextAt <= now &&
        g.nextAt < this.#windowEndMs &&
        (due === undefined || g.nextAt < due.nextAt)
      )
        due = g;
    }
    if (due !== undefined) this.#arrive(due, now);
    this.#dueAt = this.#earliestArrival();
  }

  onFailure(connection: Connection, token: unknown, reason: string): void {
    const request = token as Request;
    if (connection.reused && connection.parser.received === 0 && !request.staleRetried) {
      // A pooled connection the server had already closed: what any keep-alive client does is
      // send again on a fresh one, once; it is not the server refusing this request.
      request.staleRetried = true;
      const fresh = this.#pool.acquire(this.#now(), true);
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

  #attemptEnded(
    request: Request,
    end: { outcome: Outcome; status: number; retryAfterMs: number | undefined; reason: string },
  ): void {
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
      if (delay !== undefined && now + delay < this.#lastSendMs()) {
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

  /** The latest moment a retry can still be sent: the end of the drain, known or at the latest. */
  #lastSendMs(): number {
    return this.#scheduleDone ? this.#drainEndMs : this.#scheduleEndMs + this.#o.drainMs;
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
    this.#removeLive(request);
    if (request.warm) {
      if (this.#scheduleDone && this.#live.length === 0) this.#end();
      return;
    }
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
    if (ok) recordMs(this.#windowOk, latencyMs);
    if (this.#scheduleDone && this.#live.length === 0) this.#end();
  }

  #addLive(request: Request): void {
    request.liveIndex = this.#live.length;
    this.#live.push(request);
  }

  /** Takes the request out of flight and keeps it for reuse (nothing refers to it any more). */
  #removeLive(request: Request): void {
    const live = this.#live;
    const last = live.pop()!;
    if (last !== request) {
      live[request.liveIndex] = last;
      last.liveIndex = request.liveIndex;
    }
    request.liveIndex = -1;
    request.connection = undefined;
    request.timer = undefined;
    if (this.#spare.length < this.#o.maxInFlight) this.#spare.push(request);
  }

  #endSchedule(): void {
    if (this.#scheduleDone) return;
    this.#scheduleDone = true;
    this.#input.signal?.removeEventListener('abort', this.#abort);
    this.#cancelTick();
    if (this.#measureTimer === undefined) {
      const cpu = process.cpuUsage(this.#cpu0);
      const wallMs = Math.max(this.#now(), 1);
      this.#cpuPercent = ((cpu.user + cpu.system) / 1000 / wallMs) * 100;
    } else {
      // Aborted in the warm-up: nothing was measured.
      clearTimeout(this.#measureTimer);
      this.#startMeasuring();
    }
    if (this.#live.length === 0) {
      this.#end();
      return;
    }
    const now = this.#now();
    this.#drainEndMs = now + this.#o.drainMs;
    // Retries due after the drain will never be sent: those callers give up now, and a run
    // whose only requests left are such retries ends at once instead of waiting out the drain.
    for (const request of [...this.#live]) {
      if (request.waitingRetry && request.retryAt >= this.#drainEndMs) {
        clearTimeout(request.timer);
        request.waitingRetry = false;
        this.#finish(request, now);
      }
    }
    if (!this.#ended) this.#drainTimer = armTimer(this.#end, this.#o.drainMs);
  }

  /** Timers may fire a little early (ms granularity) or late: close on the boundary exactly. */
  readonly #onWindowTimer = (): void => {
    const early = this.#windowEndMs - this.#now();
    if (early > 0) {
      this.#windowTimer = armTimer(this.#onWindowTimer, early);
      return;
    }
    if (this.#scheduleDone) {
      this.#closeWindow();
      return;
    }
    // The tick sends what is still due in this window and closes it (in slices, if late).
    this.#cancelTick();
    this.#tick();
  };

  /** Closes one 1-second window: totals of every group, and the window's percentiles. */
  readonly #closeWindow = (): void => {
    clearTimeout(this.#windowTimer);
    const now = this.#now();
    const index = this.#windowIndex++;
    const startMs = index * 1000;
    this.#windowEndMs = startMs + 2000;
    const counts = emptyCounts();
    for (const g of this.#groups) {
      for (const key of Object.keys(counts) as (keyof WindowCounts)[])
        counts[key] += g.recorder.window[key];
    }
    const keep = this.#windows.length < this.#o.maxWindows;
    for (const g of this.#groups) g.recorder.closeWindow(keep);
    const window: WindowStats = {
      index,
      startMs,
      durationMs: Math.round(Math.min(1000, now - startMs)),
      ...counts,
      okP50Ms: percentileMs(this.#windowOk, 50),
      okP99Ms: percentileMs(this.#windowOk, 99),
      lagP99Ms: percentileMs(this.#windowLag, 99),
      inFlight: this.#live.length,
      connections: this.#pool.open,
    };
    if (keep) this.#windows.push(window);
    else this.#windowsDropped++;
    this.#windowOk.reset();
    this.#windowLag.reset();
    this.#pool.sweep(now);
    if (!this.#ended) {
      this.#windowTimer = armTimer(this.#onWindowTimer, this.#windowEndMs - this.#now());
    }
    const onWindow = this.#input.onWindow;
    if (onWindow !== undefined) {
      try {
        onWindow({ window, totals: this.#progress(now) });
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };

  #progress(now: number): LoadProgress {
    const counts = emptyCounts();
    for (const g of this.#groups) {
      for (const key of Object.keys(counts) as (keyof WindowCounts)[])
        counts[key] += g.recorder.totals[key];
    }
    return { ...counts, elapsedMs: Math.round(now), inFlight: this.#live.length };
  }

  /** Ends the run: whatever is still in flight has run out of time. */
  readonly #end = (): void => {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#drainTimer);
    clearTimeout(this.#windowTimer);
    clearTimeout(this.#measureTimer);
    const now = this.#now();
    for (const g of this.#groups) g.deadlines.clear();
    for (const request of [...this.#live]) {
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
    this.#closeWindow();
    this.#pool.close();
    this.#resolve(this.#result(now));
  };

  #result(elapsedMs: number): LoadResult {
    const o = this.#o;
    const lag: RecordableHistogram = this.#lag;
    const groups = this.#groups.map((g) => g.recorder.stats(g.config.durationMs));
    const totals = buildStats({
      name: 'total',
      ratePerSec: o.groups.reduce((sum, g) => sum + g.ratePerSec, 0),
      durationMs: o.durationMs,
      recorders: this.#groups.map((g) => g.recorder),
      windows: [],
    });
    const cpu = cpus();
    return {
      label: o.label,
      scenario: o.scenario,
      series: o.series,
      url: o.url.href,
      startedAt: this.#startedAt,
      durationMs: o.durationMs,
      elapsedMs: Math.round(elapsedMs),
      aborted: this.#aborted,
      config: {
        warmupMs: o.warmupMs,
        connection: o.connection,
        maxConnections: o.maxConnections,
        maxInFlight: o.maxInFlight,
        seed: o.seed,
        groups: o.groups.map((g) => ({
          name: g.name,
          ratePerSec: g.ratePerSec,
          arrival: g.arrival,
          method: g.method,
          path: g.path,
          deadlineMs: g.deadlineMs,
          clients: g.clients,
          startMs: g.startMs,
          durationMs: g.durationMs,
          retry: formatRetryPolicy(g.retry),
        })),
      },
      totals,
      groups,
      windows: this.#windows,
      windowsDropped: this.#windowsDropped,
      peakConnections: this.#pool.peak,
      connectionsOpened: this.#pool.opened,
      staleReconnects: this.#staleReconnects,
      validity: assessValidity({
        scheduleLagMs: {
          p50: percentileMs(lag, 50) ?? 0,
          p99: percentileMs(lag, 99) ?? 0,
          max: lag.count === 0 ? 0 : Math.round(lag.max) / 1000,
        },
        cpuPercent: this.#cpuPercent,
        offered: totals.offered,
        dropped: totals.dropped,
        droppedByReason: totals.droppedByReason,
        thresholds: o.validity,
      }),
      machine: {
        cpuModel: cpu[0]?.model.trim() ?? 'unknown',
        cpus: cpu.length,
        node: process.version,
        platform: `${process.platform} ${arch()}`,
        loadAvg1: Math.round(loadavg()[0]! * 100) / 100,
      },
    };
  }
}

/** A request with every field set, so all requests share one shape. */
function blankRequest(): Request {
  return {
    group: undefined as unknown as GroupState,
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
