/**
 * Clean-up calls — lease releases, lease renewals, the release after an acquire whose outcome
 * is unknown — must reach Redis even when the store's hot path would not call it: a release
 * dropped because the in-flight cap was reached, or because the client was reconnecting,
 * leaves a lease held that nobody holds until its TTL runs out. So they go through a lane of
 * their own:
 * - **exempt from the store's in-flight cap**, with a cap of their own (the same number,
 *   counted apart): a saturated hot path never stops a release, and a stalled Redis cannot
 *   pile up unbounded clean-up in the client either;
 * - **queued while they cannot be sent** (client not ready, lane cap reached), and sent in
 *   order as soon as the client is ready again (checked every {@link retryEveryMs} while
 *   anything waits);
 * - **retried** after an error: as often as it takes while the connection is down (the error
 *   was the connection's) until the call's `until`, at most {@link maxAttempts} times while
 *   it is up (the error was the call's, and will likely repeat);
 * - **bounded**: at most `maxQueued` wait; when full, the oldest waiting call is dropped
 *   (reported; its lease expires by its TTL). A call whose `until` has passed — its lease has
 *   expired in Redis anyway — is given up unsent;
 * - **in order**: sent by EVAL (`runInOrder`), never re-sent after `NOSCRIPT`, and sent before
 *   any hot-path call made after them ({@link flush}): a release always reaches Redis ahead
 *   of the acquire that follows it, even on a cold script cache or right after a reconnect;
 * - **batched**: calls of a clean-up batch script (`script.cleanupBatch`: lease releases) wait
 *   for the end of the tick, and those next to each other in line go as one call of up to
 *   {@link maxCleanupBatch} items (one hash slot each on a cluster), as the store's takes do:
 *   under load, releases come in runs (a batch of acquires answered at once, handlers ending
 *   together), and one script call per release costs Redis more than the releases themselves.
 *
 * Calls here are never refused for the breaker: they are few, and each goes out once per
 * attempt. Releases and renewals are idempotent, so a release that also goes out again from
 * a client's own re-send queue is harmless.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../core/clock/clock.js';
import {
  dropped,
  malformed,
  notReady,
  timedOut,
  toNumbers,
  type CallFailure,
  type ScriptRequest,
} from './call-result.js';
import { hashSlot } from './hash-slot.js';
import type { ScriptClient } from './script-client.js';
import type { RedisScript } from './redis-script.js';

/** Ms between checks for a ready client while calls wait. */
export const retryEveryMs = 20;
/** Most errors one call meets while the client stays connected. */
export const maxAttempts = 3;
/** Most clean-up calls sent as one (each counts as one call in flight). */
export const maxCleanupBatch = 16;

/** Settings of a {@link CleanupLane}. */
export interface CleanupLaneSettings {
  readonly client: ScriptClient;
  readonly clock: Clock;
  /** Most clean-up calls in flight at once. */
  readonly maxInFlight: number;
  /** Most clean-up calls waiting to be sent; past it the oldest is dropped. */
  readonly maxQueued: number;
  /** Ms a sent call with a waiter may take before the waiter hears `timeout`. */
  readonly timeoutMs: number;
  /** Told each time a waiting call is dropped because the queue is full. */
  readonly onDropped: () => void;
}

interface Job {
  readonly script: RedisScript;
  readonly request: ScriptRequest;
  /** Local time after which sending is pointless. */
  readonly until: number;
  attempts: number;
  /** Sent and not yet settled. */
  sending: boolean;
  /** Told the outcome once, if someone waits for it (renewals); cleared once told. */
  answer: ((result: number[] | CallFailure) => void) | undefined;
  /** The waiter has its answer (`timeout`, or `not-ready` at `until`): never send again. */
  abandoned: boolean;
  /** Gives the waiter `not-ready` at `until` if the job is still waiting then. */
  giveUp: TimerHandle | undefined;
}

/** Sends clean-up calls when it can, queues and retries them when it cannot. */
export class CleanupLane {
  readonly #s: CleanupLaneSettings;
  // Waiting jobs in order; sent or dropped ones leave from the head.
  #queue: Job[] = [];
  #head = 0;
  #inFlight = 0;
  #dropped = 0;
  #timer: TimerHandle | undefined;
  /** A pump is due at the end of this tick (clean-up batch calls wait for it). */
  #pumpSoon = false;
  readonly #pumpNow = (): void => {
    this.#pumpSoon = false;
    this.#pump();
  };

  constructor(settings: CleanupLaneSettings) {
    this.#s = settings;
  }

  /** Calls waiting to be sent. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Calls sent and not yet answered. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Calls dropped unsent because the queue was full, since creation. */
  get dropped(): number {
    return this.#dropped;
  }

  /**
   * Sends `script` now if it can (a clean-up batch script at the end of the tick), else queues
   * it; gives it up after local time `until`.
   */
  send(script: RedisScript, request: ScriptRequest, until: number): void {
    this.#enqueue(job(script, request, until));
    if (script.cleanupBatch === undefined) this.#pump();
    else if (!this.#pumpSoon) {
      this.#pumpSoon = true;
      queueMicrotask(this.#pumpNow);
    }
  }

  /**
   * As {@link send}, resolving with the reply, or with a failure: `timeout` when a sent call
   * takes longer than `timeoutMs`, `not-ready` when `until` passes while it waits, `dropped`,
   * or the error of its last attempt. A call whose waiter has its answer is not sent again.
   */
  ask(script: RedisScript, request: ScriptRequest, until: number): Promise<number[] | CallFailure> {
    return new Promise((resolve) => {
      const j = job(script, request, until);
      j.answer = resolve;
      this.#enqueue(j);
      this.#pump();
      // Still waiting when its use is over: its waiter hears so then, not when the client
      // is ready again.
      if (j.answer !== undefined && Number.isFinite(until)) {
        const clock = this.#s.clock;
        const giveUp = (): void => {
          // One in flight is answered by its reply or its timeout.
          if (!j.sending) this.#abandon(j, notReady);
        };
        j.giveUp = clock.setTimer(until - clock.now(), giveUp, { unref: true });
      }
    });
  }

  /**
   * Sends waiting calls now, as far as the client and the lane's cap allow: the store calls it
   * before a hot-path call, so nothing made later overtakes them.
   */
  flush(): void {
    if (this.queued > 0) this.#pump();
  }

  /** Joins the line; a full line drops its oldest job first. */
  #enqueue(j: Job): void {
    if (this.queued >= this.#s.maxQueued) {
      const oldest = this.#queue[this.#head]!;
      this.#shift();
      this.#dropped++;
      this.#abandon(oldest, dropped);
      this.#s.onDropped();
    }
    this.#queue.push(j);
  }

  /** Sends waiting jobs in order while the client is ready and the lane has room. */
  #pump(): void {
    const s = this.#s;
    const now = s.clock.now();
    while (this.queued > 0 && this.#inFlight < s.maxInFlight && s.client.ready()) {
      const j = this.#next(now);
      if (j === undefined) continue;
      if (j.script.cleanupBatch === undefined) {
        this.#run([j]);
        continue;
      }
      const jobs = [j];
      const room = Math.min(maxCleanupBatch, s.maxInFlight - this.#inFlight);
      const slot = s.client.cluster ? hashSlot(j.request.keys[0]!) : -1;
      while (jobs.length < room && this.queued > 0) {
        const next = this.#queue[this.#head]!;
        if (next.script !== j.script) break;
        if (slot >= 0 && hashSlot(next.request.keys[0]!) !== slot) break;
        const more = this.#next(now);
        if (more !== undefined) jobs.push(more);
      }
      this.#run(jobs);
    }
    if (this.queued > 0 && this.#timer === undefined) {
      this.#timer = s.clock.setTimer(
        retryEveryMs,
        () => {
          this.#timer = undefined;
          this.#pump();
        },
        { unref: true },
      );
    }
  }

  /** Takes the head of the line: the job, or undefined if its use is over. */
  #next(now: number): Job | undefined {
    const j = this.#queue[this.#head]!;
    this.#shift();
    if (now >= j.until) this.#abandon(j, notReady);
    return j.abandoned ? undefined : j;
  }

  /** Sends `jobs` (one, or several of one clean-up batch script) as one call. */
  #run(jobs: readonly Job[]): void {
    const s = this.#s;
    const first = jobs[0]!;
    const one = jobs.length === 1;
    let sent: Promise<unknown>;
    try {
      sent = s.client.runInOrder(
        first.script,
        one ? first.request.keys : jobs.flatMap((j) => j.request.keys),
        one ? first.request.args : jobs.flatMap((j) => j.request.args),
      );
    } catch (error) {
      for (const j of jobs) this.#failed(j, error);
      return;
    }
    this.#inFlight += jobs.length;
    const timers: TimerHandle[] = [];
    for (const j of jobs) {
      j.sending = true;
      if (j.answer !== undefined) {
        timers.push(
          s.clock.setTimer(s.timeoutMs, () => this.#abandon(j, timedOut), { unref: true }),
        );
      }
    }
    const settled = (): void => {
      this.#inFlight -= jobs.length;
      for (const j of jobs) j.sending = false;
      for (const t of timers) s.clock.clearTimer(t);
    };
    sent.then(
      (reply) => {
        settled();
        const numbers = toNumbers(reply);
        if (one) this.#tell(first, numbers ?? malformed());
        else {
          const width = first.script.cleanupBatch!.reply;
          const whole = numbers !== undefined && numbers.length === width * jobs.length;
          jobs.forEach((j, i) => {
            this.#tell(j, whole ? numbers.slice(i * width, (i + 1) * width) : malformed());
          });
        }
        this.#pump();
      },
      (error: unknown) => {
        settled();
        for (const j of jobs) this.#failed(j, error);
        this.#pump();
      },
    );
  }

  /** Puts a failed job back in line, unless its attempts or its use are over. */
  #failed(j: Job, error: unknown): void {
    const s = this.#s;
    // An error while connected is the call's own; one that came with the connection is not.
    if (s.client.ready()) j.attempts++;
    if (j.abandoned || j.attempts >= maxAttempts || s.clock.now() >= j.until) {
      this.#tell(j, { failed: 'error', error });
      return;
    }
    this.#enqueue(j);
  }

  /** Answers `j`'s waiter (if it has one yet to hear) and makes sure `j` is not sent again. */
  #abandon(j: Job, result: CallFailure): void {
    j.abandoned = true;
    this.#tell(j, result);
  }

  #tell(j: Job, result: number[] | CallFailure): void {
    const answer = j.answer;
    if (answer === undefined) return;
    j.answer = undefined;
    if (j.giveUp !== undefined) this.#s.clock.clearTimer(j.giveUp);
    answer(result);
  }

  #shift(): void {
    this.#queue[this.#head] = undefined as unknown as Job; // let it be collected
    this.#head++;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }
}

function job(script: RedisScript, request: ScriptRequest, until: number): Job {
  return {
    script,
    request,
    until,
    attempts: 0,
    sending: false,
    answer: undefined,
    abandoned: false,
    giveUp: undefined,
  };
}
