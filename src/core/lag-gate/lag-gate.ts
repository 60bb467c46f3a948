/**
 * A producer-side admission limit fed by a consumer's lag: a broker always accepts, so the
 * producer reads the backlog the consumer has not finished (from the broker, through a lag
 * source) and stops publishing while it is over a bound. Decisions are values (`tryAdmit`);
 * `admit` waits instead, in a bounded line served oldest first.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { BacklogFullError } from '../errors/backlog-full-error.js';
import { WaitLineFullError } from '../errors/wait-line-full-error.js';
import {
  clockLike,
  nonNegativeInteger,
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { LineWaiter, WaitingLine, type WaiterOwner } from '../internal/waiting-line.js';
import { rejectSoon } from '../internal/reject-soon.js';
import { LagReader } from './lag-reader.js';

import type {
  AdmitOptions,
  AdmitResult,
  LagGate,
  LagGateOptions,
  LagRefusalReason,
  StalePolicy,
} from './lag-gate-types.js';

export type { LagReadContext, LagReading, ReadLag } from './lag-reader.js';
export type * from './lag-gate-types.js';

const defaults = {
  pollMs: 250,
  staleAfterMs: 2_000,
  onStale: 'closed',
  maxWaiting: 1_000,
} as const;

const granted: Promise<void> = Promise.resolve();

class Gate implements LagGate, WaiterOwner {
  readonly #reader: LagReader;
  readonly #clock: Clock;
  readonly #maxLag: number;
  readonly #maxAgeMs: number | undefined;
  readonly #onStale: StalePolicy;
  readonly #maxWaiting: number;
  readonly #line = new WaitingLine();
  #queued = 0;
  #wake: TimerHandle | undefined;
  #serving = false;

  constructor(o: LagGateOptions) {
    this.#clock = clockLike('clock', o.clock ?? systemClock);
    this.#maxLag = positiveInteger('maxLag', o.maxLag);
    this.#maxAgeMs = o.maxAgeMs === undefined ? undefined : positiveNumber('maxAgeMs', o.maxAgeMs);
    const pollMs = positiveNumber('pollMs', o.pollMs ?? defaults.pollMs);
    const staleAfterMs = positiveNumber('staleAfterMs', o.staleAfterMs ?? defaults.staleAfterMs);
    if (staleAfterMs < pollMs) {
      throw new SpillwayConfigError('staleAfterMs', `at least pollMs (${pollMs})`, staleAfterMs);
    }
    this.#onStale = oneOf('onStale', o.onStale ?? defaults.onStale, ['open', 'closed']);
    this.#maxWaiting = nonNegativeInteger('maxWaiting', o.maxWaiting ?? defaults.maxWaiting);
    if (typeof o.readLag !== 'function') {
      throw new SpillwayConfigError('readLag', 'a function returning { messages }', o.readLag);
    }
    this.#reader = new LagReader({
      readLag: o.readLag,
      clock: this.#clock,
      pollMs,
      staleAfterMs,
      settled: () => this.#serve(),
    });
  }

  get lag(): number | undefined {
    return this.#reader.estimate;
  }

  get drainPerSec(): number | undefined {
    const perMs = this.#reader.drainPerMs;
    return perMs === undefined ? undefined : perMs * 1000;
  }

  get waiting(): number {
    return this.#line.size;
  }

  get lastError(): unknown {
    return this.#reader.lastError;
  }

  tryAdmit(n = 1): AdmitResult {
    const problem = this.#checkN(n);
    if (problem !== undefined) throw problem;
    if (this.#line.size > 0) {
      const now = this.#clock.now();
      return refusal('lag', this.#reader.drainWait(this.#excess(this.#queued + n), now));
    }
    return this.#decide(n);
  }

  admit(options: AdmitOptions = {}): Promise<void> {
    const n = options.n ?? 1;
    const problem = this.#checkN(n);
    if (problem !== undefined) return Promise.reject(problem);
    const { signal } = options;
    const maxWaitMs = options.maxWaitMs ?? Infinity;
    if (typeof maxWaitMs !== 'number' || !(maxWaitMs >= 0)) {
      return Promise.reject(
        new SpillwayArgumentError('maxWaitMs', 'a number of 0 or more (ms)', maxWaitMs),
      );
    }
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    const d = this.tryAdmit(n);
    if (d.ok) return granted;
    if (d.retryAfterMs > maxWaitMs) {
      return rejectSoon(new BacklogFullError({ by: 'gate', retryAfterMs: d.retryAfterMs }));
    }
    if (this.#line.size >= this.#maxWaiting) {
      return rejectSoon(
        new WaitLineFullError({ maxWaiting: this.#maxWaiting, retryAfterMs: d.retryAfterMs }),
      );
    }
    const waiter = new LineWaiter(this, n, signal);
    const promise = this.#line.join(waiter);
    this.#queued += n;
    if (Number.isFinite(maxWaitMs)) {
      waiter.timer = this.#clock.setTimer(maxWaitMs, () => this.#expire(waiter));
    }
    if (this.#line.size === 1) this.#arm(d.retryAfterMs);
    return promise;
  }

  /** A waiter's signal aborted: it leaves; if it was first, the next may be served now. */
  abandon(waiter: LineWaiter): void {
    if (waiter.settled) return;
    const first = waiter === this.#line.head;
    this.#leave(waiter);
    this.#line.refuse(waiter, waiter.signal?.reason);
    if (first) this.#serve();
  }

  #expire(waiter: LineWaiter): void {
    if (waiter.settled) return;
    waiter.timer = undefined;
    const first = waiter === this.#line.head;
    const retryAfterMs = this.#reader.drainWait(this.#excess(waiter.n), this.#clock.now());
    this.#leave(waiter);
    this.#line.refuse(waiter, new BacklogFullError({ by: 'gate', retryAfterMs }));
    if (first) this.#serve();
  }

  #leave(waiter: LineWaiter): void {
    this.#queued -= waiter.n;
    if (waiter.timer !== undefined) this.#clock.clearTimer(waiter.timer);
    waiter.timer = undefined;
    if (this.#line.size === 1 && this.#wake !== undefined) {
      this.#clock.clearTimer(this.#wake);
      this.#wake = undefined;
    }
  }

  /** Admits waiters oldest first while the gate allows; re-arms the wake timer for the rest. */
  #serve(): void {
    if (this.#serving) return;
    this.#serving = true;
    try {
      if (this.#wake !== undefined) this.#clock.clearTimer(this.#wake);
      this.#wake = undefined;
      for (let head = this.#line.head; head !== undefined; head = this.#line.head) {
        const d = this.#decide(head.n);
        if (!d.ok) {
          this.#arm(d.retryAfterMs);
          return;
        }
        this.#leave(head);
        this.#line.grant(head);
      }
    } finally {
      this.#serving = false;
    }
  }

  #arm(ms: number): void {
    if (this.#wake !== undefined) this.#clock.clearTimer(this.#wake);
    this.#wake = this.#clock.setTimer(ms, () => {
      this.#wake = undefined;
      this.#serve();
    });
  }

  /** The one decision, for `tryAdmit` and for the head of the line. */
  #decide(n: number): AdmitResult {
    const reader = this.#reader;
    const now = this.#clock.now();
    reader.refresh(now);
    const state = reader.state(now);
    if (state === 'stale') {
      if (this.#onStale === 'closed') return refusal('stale', reader.untilNextReading(now));
      reader.admitted(n);
      return admitted;
    }
    if (state === 'unknown') return refusal('no-reading', reader.untilNextReading(now));
    const age = reader.oldestAgeMs;
    if (this.#maxAgeMs !== undefined && age !== undefined && age > this.#maxAgeMs) {
      return refusal('age', reader.untilNextReading(now));
    }
    const excess = this.#excess(n);
    if (excess > 0) return refusal('lag', reader.drainWait(excess, now));
    reader.admitted(n);
    return admitted;
  }

  /** How far `n` more would take the counted backlog past `maxLag`. */
  #excess(n: number): number {
    return (this.#reader.estimate ?? 0) + n - this.#maxLag;
  }

  #checkN(n: unknown): SpillwayArgumentError | undefined {
    if (n === 1) return undefined;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > this.#maxLag) {
      return new SpillwayArgumentError('n', `an integer from 1 to maxLag (${this.#maxLag})`, n);
    }
    return undefined;
  }
}

const admitted: AdmitResult = Object.freeze({ ok: true });

function refusal(reason: LagRefusalReason, retryAfterMs: number): AdmitResult {
  return { ok: false, retryAfterMs, signal: 'later', reason };
}

/**
 * Creates a producer-side gate on a consumer's lag. Reads are lazy: the gate reads its source
 * when asked (and every `pollMs` while callers wait in `admit`), never on a background timer.
 *
 * @example
 * const gate = lagGate({ readLag: async () => ({ messages: await backlog() }), maxLag: 1_000 });
 * const r = gate.tryAdmit();
 * if (r.ok) await publish(message);
 * else slowDown(r.retryAfterMs);
 */
export function lagGate(options: LagGateOptions): LagGate {
  return new Gate(optionsObject('lagGate options', options) as LagGateOptions);
}
