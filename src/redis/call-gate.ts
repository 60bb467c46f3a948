/**
 * Every Redis call goes through this gate, so the limiter never becomes the queue:
 * - a deadline per call (`timeoutMs`) on the injected clock, whatever the client does with
 *   its own offline queue or timeouts; the answer is a value, never a rejection;
 * - a cap on calls in flight per process (`maxInFlight`): a call counts until Redis actually
 *   answers or the client gives up, not until its deadline, so a stalled Redis cannot pile up
 *   commands in the client;
 * - a breaker that stops calling a Redis that keeps failing, and a readiness check that skips
 *   calls while the client is disconnected.
 *
 * All calls share one timeout, so deadlines expire in the order calls were made: one timer for
 * the oldest pending call replaces a timer per call.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../core/clock/clock.js';
import type { ScriptClient } from './script-client.js';
import type { RedisScript } from './scripts.js';
import { StoreBreaker } from './store-breaker.js';

/** Why a call produced no reply. */
export type FailureKind = 'timeout' | 'error' | 'not-ready' | 'breaker-open' | 'saturated';

/** A call that produced no reply; the caller answers by its failure policy. */
export interface CallFailure {
  readonly failed: FailureKind;
  readonly error?: unknown;
}

/** Settings of a {@link CallGate}. */
export interface CallGateSettings {
  readonly client: ScriptClient;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly maxInFlight: number;
  readonly breakerFailures: number;
  readonly breakerCooldownMs: number;
  /** Told about every failure, and about the breaker opening and closing. */
  readonly onFailure: (failure: CallFailure) => void;
  readonly onBreaker: (state: 'open' | 'closed') => void;
}

interface Pending {
  readonly deadline: number;
  done: boolean;
  resolve: (value: number[] | CallFailure) => void;
}

const notReady: CallFailure = Object.freeze({ failed: 'not-ready' });
const breakerOpen: CallFailure = Object.freeze({ failed: 'breaker-open' });
const saturated: CallFailure = Object.freeze({ failed: 'saturated' });
const timedOut: CallFailure = Object.freeze({ failed: 'timeout' });

/** The keys and arguments of one script call. */
export interface ScriptRequest {
  readonly keys: string[];
  readonly args: (string | number)[];
}

const identity = <T>(x: T): T => x;

/** True when `r` is a failure rather than a reply. */
export function isFailure(r: number[] | CallFailure): r is CallFailure {
  return !Array.isArray(r);
}

/** Runs scripts under a deadline, an in-flight cap and a breaker. */
export class CallGate {
  readonly #s: CallGateSettings;
  readonly #breaker: StoreBreaker;
  // Pending calls in deadline order (= call order); settled ones leave from the head.
  #pending: Pending[] = [];
  #head = 0;
  #timer: TimerHandle | undefined;
  #inFlight = 0;

  constructor(settings: CallGateSettings) {
    this.#s = settings;
    this.#breaker = new StoreBreaker(settings.breakerFailures, settings.breakerCooldownMs);
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

  /** Runs `script`; resolves with its integer reply or a failure, within `timeoutMs`. */
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
    let sent: Promise<unknown>;
    try {
      sent = s.client.run(script, request.keys, request.args);
    } catch (error) {
      return Promise.resolve(finish(this.#fail({ failed: 'error', error }, now)));
    }
    this.#inFlight++;
    return new Promise<T>((resolve) => {
      const p: Pending = {
        deadline: now + s.timeoutMs,
        done: false,
        resolve: (r) => resolve(finish(r)),
      };
      this.#pending.push(p);
      if (this.#timer === undefined) this.#arm(s.timeoutMs);
      sent.then(
        (reply) => {
          this.#inFlight--;
          if (p.done) return;
          this.#settle(p);
          const numbers = toNumbers(reply);
          if (numbers === undefined) {
            const error = new TypeError('Redis script reply is not a list of integers');
            p.resolve(this.#fail({ failed: 'error', error }, now));
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

  /**
   * Fire-and-forget call for background clean-up (lease release, unknown outcomes): same cap
   * and readiness check, no deadline, no breaker report.
   */
  background(script: RedisScript, request: ScriptRequest): void {
    const s = this.#s;
    if (!s.client.ready() || this.#inFlight >= s.maxInFlight) return;
    this.#inFlight++;
    const done = (): void => {
      this.#inFlight--;
    };
    try {
      s.client.run(script, request.keys, request.args).then(done, done);
    } catch {
      done();
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

/** Checks a script reply (RESP2 or RESP3) is a list of numbers; bigints become numbers. */
function toNumbers(reply: unknown): number[] | undefined {
  if (typeof reply === 'number') return [reply];
  if (!Array.isArray(reply)) return undefined;
  const out = reply as unknown[];
  for (let i = 0; i < out.length; i++) {
    const v = out[i];
    if (typeof v === 'number') continue;
    if (typeof v !== 'bigint') return undefined;
    out[i] = Number(v);
  }
  return out as number[];
}
