/**
 * Every Redis call goes through this gate, so the limiter never becomes the queue:
 * - a deadline per call (`timeoutMs`) on the injected clock, whatever the client does with
 *   its own offline queue or timeouts; the answer is a value, never a rejection;
 * - the same deadline sent to Redis with every take script, as a time on Redis's clock
 *   (see `redis-time.ts`): a timed-out call is not an unexecuted one — it may still reach
 *   Redis, held by a stall or re-sent by the client — so the script itself refuses to act
 *   once the caller has given up;
 * - a cap on calls in flight per process (`maxInFlight`): a call counts until Redis actually
 *   answers or the client gives up, not until its deadline, so a stalled Redis cannot pile up
 *   commands in the client (a batch counts as many calls as it has items);
 * - batches: the takes of a batch script (rate decisions, lease acquires) made in one tick go
 *   to Redis as one call of up to `maxBatch` items (16 by default), per script (and per hash
 *   slot on a cluster), run atomically item after item; each item gets its part of the reply,
 *   or the call's failure. A batch's deadline runs from its first item, and a plain call never
 *   overtakes a batch made before it. One round trip and one command for many decisions is
 *   most of what makes the store fast;
 * - a breaker that stops calling a Redis that keeps failing, and a readiness check that skips
 *   calls while the client is disconnected;
 * - a lane for clean-up (`cleanup`: releases, renewals) that is exempt from the cap and the
 *   breaker, queued and retried when the client is ready again, and sent ahead of every call
 *   made after it (see `cleanup-lane.ts`).
 *
 * All calls share one timeout, so deadlines expire in the order calls were made: one timer for
 * the oldest pending call replaces a timer per call.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../core/clock/clock.js';
import {
  breakerOpen,
  expired,
  malformed,
  notReady,
  saturated,
  timedOut,
  toList,
  toNumbers,
  type CallFailure,
  type ScriptRequest,
} from './call-result.js';
import { CleanupLane } from './cleanup-lane.js';
import { RedisTime } from './redis-time.js';
import type { ScriptClient } from './script-client.js';
import type { RedisScript } from './redis-script.js';
import { StoreBreaker } from './store-breaker.js';
import { hashSlot } from './hash-slot.js';

export {
  isFailure,
  type CallFailure,
  type FailureKind,
  type ScriptRequest,
} from './call-result.js';

/** Settings of a {@link CallGate}. */
export interface CallGateSettings {
  readonly client: ScriptClient;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly maxInFlight: number;
  /**
   * Most items in one batch. Several smaller batches can beat one big one: Redis runs the
   * first while this process still builds the next (BENCHMARKS.md, S7).
   */
  readonly maxBatch: number;
  readonly breakerFailures: number;
  readonly breakerCooldownMs: number;
  /** Most clean-up calls waiting for a ready client; past it the oldest is dropped. */
  readonly cleanupMaxQueue: number;
  /** Told about every failure (a dropped clean-up call too), and the breaker's changes. */
  readonly onFailure: (failure: CallFailure) => void;
  readonly onBreaker: (state: 'open' | 'closed') => void;
}

/** One call to Redis: a plain call, or a batch of the same script's items made in one tick. */
interface Call {
  readonly script: RedisScript;
  /** Local time the call (its first item) was made. */
  readonly at: number;
  readonly deadline: number;
  readonly keys: (string | number)[];
  readonly args: (string | number)[];
  readonly mixed: boolean;
  /** Each item's `finish`, told its reply (its numbers, or the failure), in order. */
  readonly items: ((result: number[] | CallFailure) => unknown)[];
  /** Each item's promise's resolve, given what its `finish` returned. */
  readonly resolves: ((value: unknown) => void)[];
  done: boolean;
}

const identity = <T>(x: T): T => x;

/** Runs scripts under a deadline, an in-flight cap and a breaker. */
export class CallGate {
  /** Releases and renewals: exempt from the cap, retried when the client is ready again. */
  readonly cleanup: CleanupLane;
  readonly #s: CallGateSettings;
  readonly #breaker: StoreBreaker;
  readonly #time = new RedisTime();
  // Calls in deadline order (= call order); settled ones leave from the head.
  #pending: Call[] = [];
  #head = 0;
  #timer: TimerHandle | undefined;
  #inFlight = 0;
  // Batches taking items until the microtask that sends them: one per script (per script
  // and hash slot on a cluster, where one script's keys must share a slot).
  readonly #open = new Map<unknown, Call>();
  readonly #sendOpen = (): void => this.#flush();
  // One executor for every item's promise, leaving its resolve here: a closure per item (and
  // another to resolve with `finish`'s answer) was most of what a decision left to collect.
  #resolve: (value: unknown) => void = () => {};
  readonly #capture = (resolve: (value: unknown) => void): void => {
    this.#resolve = resolve;
  };

  constructor(settings: CallGateSettings) {
    this.#s = settings;
    this.#breaker = new StoreBreaker(settings.breakerFailures, settings.breakerCooldownMs);
    this.cleanup = new CleanupLane({
      client: settings.client,
      clock: settings.clock,
      maxInFlight: settings.maxInFlight,
      maxQueued: settings.cleanupMaxQueue,
      timeoutMs: settings.timeoutMs,
      onDropped: () => settings.onFailure({ failed: 'dropped' }),
    });
  }

  /** Items (decisions, acquires) waiting for Redis now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** `closed` (calling Redis), `open` (not calling) or `probing`. */
  get breakerState(): 'closed' | 'open' | 'probing' {
    return this.#breaker.state;
  }

  /** Ms until the breaker lets a probe through (0 when closed). */
  breakerWaitMs(): number {
    return this.#breaker.waitMs(this.#s.clock.now());
  }

  /**
   * Runs `script`; resolves with its integer reply or a failure, within `timeoutMs`. A take
   * script (`script.expires`) gets the deadline as its last argument, in Redis time. A batch
   * script's item joins the other items made in the same tick, sent as one call at the end of
   * it; it resolves with its own part of the reply.
   */
  call(script: RedisScript, request: ScriptRequest): Promise<number[] | CallFailure> {
    return this.callThen(script, request, identity);
  }

  /**
   * As {@link call}, resolving with `finish(reply or failure)`: one promise per decision
   * instead of a chain (this is the hot path).
   */
  callThen<T>(
    script: RedisScript,
    request: ScriptRequest,
    finish: (result: number[] | CallFailure) => T,
  ): Promise<T> {
    const s = this.#s;
    const now = s.clock.now();
    // The cap first: a call refused here must not take the breaker's one probe.
    if (this.#inFlight >= s.maxInFlight) return Promise.resolve(finish(this.#fail(saturated, now)));
    const ready = s.client.ready();
    if (!this.#breaker.allow(now, ready)) {
      return Promise.resolve(finish(this.#fail(breakerOpen, now)));
    }
    if (!ready) return Promise.resolve(finish(this.#fail(notReady, now)));
    // Releases waiting for a ready client go first: an acquire must not overtake them.
    this.cleanup.flush();
    const batch = script.batch !== undefined;
    // A plain call goes now, so the batches made before it must go first.
    if (!batch) this.#flush();
    const group = batch && s.client.cluster ? `${script.sha}${hashSlot(request.keys[0]!)}` : script;
    let c = batch ? this.#open.get(group) : undefined;
    if (c === undefined) {
      c = this.#start(script, request, now);
      if (batch) {
        if (this.#open.size === 0) queueMicrotask(this.#sendOpen);
        this.#open.set(group, c);
      }
    }
    this.#inFlight++;
    const call = c;
    const done = new Promise<T>(this.#capture as (resolve: (value: T) => void) => void);
    call.items.push(finish);
    call.resolves.push(this.#resolve);
    push(call.keys, request.keys);
    push(call.args, request.args);
    if (!batch) this.#send(call);
    else if (call.items.length >= s.maxBatch) {
      // Full: it goes now, so Redis works on it while the rest of the tick is batched.
      this.#open.delete(group);
      this.#send(call);
    }
    return done;
  }

  /** A call with no items yet, pending from now: its deadline runs from its first item. */
  #start(script: RedisScript, request: ScriptRequest, now: number): Call {
    const s = this.#s;
    const c: Call = {
      script,
      at: now,
      deadline: now + s.timeoutMs,
      keys: [],
      args: [],
      mixed: request.mixed === true,
      items: [],
      resolves: [],
      done: false,
    };
    this.#pending.push(c);
    if (this.#timer === undefined) this.#arm(s.timeoutMs);
    return c;
  }

  /**
   * Sends the open batches (a batch whose deadline passed unsent is not sent). Each leaves the
   * map before it is sent, one `delete` each, not a `clear()` after the loop: with `clear()`,
   * Node 22 and 24 kept dead batches, and all they reached, alive through scavenges (V8 links
   * a cleared map's old table to its new one, the likely path; Node 20 did not). Under S7's
   * open loop through ioredis, the share of allocation surviving a scavenge fell from 3.7 to
   * 0.4 % on Node 22 and from 10 to 7.4 % on Node 24 (bench/diagnostics/redis-scavenges.js).
   */
  #flush(): void {
    if (this.#open.size === 0) return;
    for (const [group, c] of this.#open) {
      this.#open.delete(group);
      if (c.done) this.#inFlight -= c.items.length;
      else this.#send(c);
    }
  }

  #send(c: Call): void {
    const s = this.#s;
    if (c.script.expires) c.args.push(this.#time.toRedisUs(c.deadline));
    let sent: Promise<unknown>;
    try {
      sent = s.client.run(c.script, c.keys as string[], c.args);
    } catch (error) {
      this.#inFlight -= c.items.length;
      this.#settle(c);
      this.#failAll(c, { failed: 'error', error }, s.clock.now());
      return;
    }
    sent.then(
      (reply) => this.#replied(c, reply),
      (error: unknown) => {
        this.#inFlight -= c.items.length;
        if (c.done) return;
        this.#settle(c);
        this.#failAll(c, { failed: 'error', error }, s.clock.now());
      },
    );
  }

  #replied(c: Call, reply: unknown): void {
    const s = this.#s;
    const script = c.script;
    this.#inFlight -= c.items.length;
    // Late replies still tell the time (a take script ends with Redis's now).
    const numbers =
      c.done && !script.expires ? undefined : c.mixed ? toList(reply) : toNumbers(reply);
    if (script.expires && numbers !== undefined) {
      this.#time.observe(c.at, s.clock.now(), numbers[numbers.length - 1]!);
    }
    if (c.done) return;
    this.#settle(c);
    const now = s.clock.now();
    // Redis ran it after the deadline it was given, and did nothing.
    if (script.expires && numbers?.[0] === -1) {
      this.#failAll(c, expired, now);
      return;
    }
    const width = script.batch?.reply;
    const n = c.items.length;
    if (numbers === undefined || (width !== undefined && numbers.length !== n * width + 1)) {
      this.#failAll(c, malformed(), now);
      return;
    }
    if (this.#breaker.success()) s.onBreaker('closed');
    if (width === undefined) {
      c.resolves[0]!(c.items[0]!(numbers));
      return;
    }
    for (let i = 0; i < n; i++) {
      c.resolves[i]!(c.items[i]!(numbers.slice(i * width, i * width + width)));
    }
  }

  /** Each item of `c` fails, as a call of its own would (the breaker counts each). */
  #failAll(c: Call, failure: CallFailure, now: number): void {
    for (let i = 0; i < c.items.length; i++) {
      c.resolves[i]!(c.items[i]!(this.#fail(failure, now)));
    }
  }

  #fail(failure: CallFailure, now: number): CallFailure {
    // Refusing at the cap says nothing about Redis's health; the calls ahead will.
    if (failure !== breakerOpen && failure !== saturated && this.#breaker.failure(now)) {
      this.#s.onBreaker('open');
    }
    this.#s.onFailure(failure);
    return failure;
  }

  #settle(p: Call): void {
    p.done = true;
    const q = this.#pending;
    while (this.#head < q.length && q[this.#head]!.done) this.#head++;
    if (this.#head === q.length) {
      this.#pending = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > q.length) {
      this.#pending = q.slice(this.#head);
      this.#head = 0;
    }
  }

  #arm(ms: number): void {
    this.#timer = this.#s.clock.setTimer(ms, () => {
      this.#timer = undefined;
      this.#expire();
    });
  }

  #expire(): void {
    const now = this.#s.clock.now();
    const q = this.#pending;
    while (this.#head < q.length) {
      const p = q[this.#head]!;
      if (!p.done) {
        // Timers may fire a fraction of a millisecond early.
        if (p.deadline - now > 0.5) break;
        p.done = true;
        this.#failAll(p, timedOut, now);
      }
      this.#head++;
    }
    if (this.#head === q.length) {
      this.#pending = [];
      this.#head = 0;
      return;
    }
    this.#arm(q[this.#head]!.deadline - now);
  }
}

function push(to: (string | number)[], from: readonly (string | number)[]): void {
  for (let i = 0; i < from.length; i++) to.push(from[i]!);
}
