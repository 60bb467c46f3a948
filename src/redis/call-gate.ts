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
 *   commands in the client;
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
  readonly breakerFailures: number;
  readonly breakerCooldownMs: number;
  /** Most clean-up calls waiting for a ready client; past it the oldest is dropped. */
  readonly cleanupMaxQueue: number;
  /** Told about every failure (a dropped clean-up call too), and the breaker's changes. */
  readonly onFailure: (failure: CallFailure) => void;
  readonly onBreaker: (state: 'open' | 'closed') => void;
}

interface Pending {
  readonly deadline: number;
  done: boolean;
  resolve: (value: number[] | CallFailure) => void;
}

const identity = <T>(x: T): T => x;

/** Runs scripts under a deadline, an in-flight cap and a breaker. */
export class CallGate {
  /** Releases and renewals: exempt from the cap, retried when the client is ready again. */
  readonly cleanup: CleanupLane;
  readonly #s: CallGateSettings;
  readonly #breaker: StoreBreaker;
  readonly #time = new RedisTime();
  // Pending calls in deadline order (= call order); settled ones leave from the head.
  #pending: Pending[] = [];
  #head = 0;
  #timer: TimerHandle | undefined;
  #inFlight = 0;

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

  /** Calls waiting for Redis now. */
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
   * script (`script.expires`) gets the deadline as its last argument, in Redis time.
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
    const deadline = now + s.timeoutMs;
    const args = script.expires
      ? request.args.concat(this.#time.toRedisUs(deadline))
      : request.args;
    let sent: Promise<unknown>;
    try {
      sent = s.client.run(script, request.keys, args);
    } catch (error) {
      return Promise.resolve(finish(this.#fail({ failed: 'error', error }, now)));
    }
    this.#inFlight++;
    return new Promise<T>((resolve) => {
      const p: Pending = {
        deadline,
        done: false,
        resolve: (r) => resolve(finish(r)),
      };
      this.#pending.push(p);
      if (this.#timer === undefined) this.#arm(s.timeoutMs);
      sent.then(
        (reply) => {
          this.#inFlight--;
          // Late replies still tell the time (a take script ends with Redis's now).
          const numbers =
            p.done && !script.expires
              ? undefined
              : request.mixed === true
                ? toList(reply)
                : toNumbers(reply);
          if (script.expires && numbers !== undefined) {
            this.#time.observe(now, s.clock.now(), numbers[numbers.length - 1]!);
          }
          if (p.done) return;
          this.#settle(p);
          if (numbers === undefined) {
            p.resolve(this.#fail(malformed(), now));
            return;
          }
          // Redis ran it after the deadline it was given, and did nothing.
          if (script.expires && numbers[0] === -1) {
            p.resolve(this.#fail(expired, s.clock.now()));
            return;
          }
          if (this.#breaker.success()) s.onBreaker('closed');
          p.resolve(numbers);
        },
        (error: unknown) => {
          this.#inFlight--;
          if (p.done) return;
          this.#settle(p);
          p.resolve(this.#fail({ failed: 'error', error }, s.clock.now()));
        },
      );
    });
  }

  #fail(failure: CallFailure, now: number): CallFailure {
    // Refusing at the cap says nothing about Redis's health; the calls ahead will.
    if (failure !== breakerOpen && failure !== saturated && this.#breaker.failure(now)) {
      this.#s.onBreaker('open');
    }
    this.#s.onFailure(failure);
    return failure;
  }

  #settle(p: Pending): void {
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
        p.resolve(this.#fail(timedOut, now));
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
