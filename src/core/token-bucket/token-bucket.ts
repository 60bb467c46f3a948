/**
 * A token bucket with continuous refill. Decisions are values, a refused take consumes
 * nothing, and `retryAfterMs` is exact: the time until `n` tokens are due, rounded up. `take`
 * waits for the tokens instead, in a bounded line served oldest first (see `pacing-line.ts`).
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { Emitter, type Event } from '../events/emitter.js';
import {
  clockLike,
  nonNegativeInteger,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';
import { PacingLine, type WaitTally } from './pacing-line.js';
import { granted, readTake, takeWaiting, type PaceHost, type TakeOptions } from './take-waiting.js';
import { checkTake, tokenEpsilon, waitMs } from './token-bucket-math.js';

/** Options of {@link tokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens added per second, continuously. Required. */
  readonly ratePerSec: number;
  /** Capacity: the most tokens the bucket holds, and the largest single take. Required. */
  readonly burst: number;
  /** Most callers waiting in `take`'s line at once; one more is refused. @default 1_000 */
  readonly maxWaiting?: number;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** The answer to a take: admitted with what is left, or refused with the exact wait. */
export type TakeResult =
  | { readonly ok: true; readonly remaining: number }
  | { readonly ok: false; readonly retryAfterMs: number };

/** Emitted on every refused take (only built when somebody listens). */
export interface ThrottleEvent {
  readonly tokens: number;
  readonly retryAfterMs: number;
}

/** A token bucket. */
export interface TokenBucket {
  /**
   * Takes `n` tokens (default 1) if they are there and nobody waits in `take`'s line (no
   * barging); otherwise consumes nothing. While callers wait, `retryAfterMs` counts their turn.
   */
  tryTake(n?: number): TakeResult;
  /**
   * Waits for the tokens: resolves when they are granted, in arrival order. Rejects at once,
   * taking nothing and never after waiting, when the wait would exceed `maxWaitMs`
   * (`RateLimitedError`) or the deadline (`DeadlineExceededError`), when `maxWaiting` callers
   * already wait (`WaitLineFullError`), or when `n` is invalid or larger than `burst`
   * (`SpillwayArgumentError`). If `signal` aborts while waiting, the caller leaves the line at
   * once (timer and listener gone) and the promise rejects with `signal.reason`; tokens once
   * granted stay granted.
   */
  take(options?: TakeOptions): Promise<void>;
  /** Whole tokens available now. */
  readonly available: number;
  /** Callers waiting in `take`'s line. */
  readonly waiting: number;
  /** Tokens added per second. */
  readonly ratePerSec: number;
  /** Capacity. */
  readonly burst: number;
  /** Fires on each refusal. */
  readonly onThrottle: Event<ThrottleEvent>;
}

/**
 * Creates a token bucket that starts full.
 *
 * @example
 * const bucket = tokenBucket({ ratePerSec: 150, burst: 15 });
 * const r = bucket.tryTake();
 * if (!r.ok) reply429(r.retryAfterMs);
 *
 * @example Pacing outbound calls to a published rate
 * const api = tokenBucket({ ratePerSec: 10, burst: 10, maxWaiting: 100 });
 * await api.take({ maxWaitMs: 2_000, signal });
 * await callThirdParty();
 */
export function tokenBucket(options: TokenBucketOptions): TokenBucket {
  const o = optionsObject('tokenBucket options', options);
  const ratePerSec = positiveNumber('ratePerSec', o.ratePerSec);
  const burst = positiveInteger('burst', o.burst);
  const maxWaiting = nonNegativeInteger('maxWaiting', o.maxWaiting ?? 1_000);
  const clock = clockLike('clock', o.clock ?? systemClock);
  return new Bucket({ ratePerSec, burst, maxWaiting }, clock);
}

class Bucket implements TokenBucket, PaceHost {
  readonly ratePerSec: number;
  readonly burst: number;
  readonly maxWaiting: number;
  readonly clock: Clock;
  readonly tally: WaitTally = { waiting: 0 };
  readonly #ratePerMs: number;
  readonly #line: PacingLine;
  #tokens: number;
  #updatedAt: number;
  readonly #throttle = new Emitter<ThrottleEvent>();
  readonly onThrottle = this.#throttle.event;

  constructor(settings: { ratePerSec: number; burst: number; maxWaiting: number }, clock: Clock) {
    this.ratePerSec = settings.ratePerSec;
    this.burst = settings.burst;
    this.maxWaiting = settings.maxWaiting;
    this.#ratePerMs = settings.ratePerSec / 1000;
    this.clock = clock;
    this.#tokens = settings.burst;
    this.#updatedAt = clock.now();
    this.#line = new PacingLine({
      clock,
      ratePerMs: this.#ratePerMs,
      tally: this.tally,
      take: (n) => this.#serveWaiter(n),
      // The line is gone: the bucket holds no more than burst again.
      emptied: () => {
        if (this.#tokens > this.burst) this.#tokens = this.burst;
      },
    });
  }

  get waiting(): number {
    return this.tally.waiting;
  }

  get available(): number {
    this.#refill();
    return Math.max(0, Math.floor(this.#tokens + tokenEpsilon));
  }

  tryTake(n = 1): TakeResult {
    if (n !== 1) checkTake(n, this.burst);
    this.#refill();
    const tokens = this.#tokens;
    if (this.tally.waiting === 0) {
      if (tokens + tokenEpsilon >= n) {
        this.#tokens = tokens - n;
        return { ok: true, remaining: Math.max(0, Math.floor(tokens - n + tokenEpsilon)) };
      }
      return this.#refuse(tokens, waitMs(n - tokens, this.#ratePerMs));
    }
    return this.#refuse(tokens, this.#line.waitBehind(n, this.clock.now()));
  }

  take(options?: TakeOptions): Promise<void> {
    // The common call, one token and no options, costs what `tryTake()` costs.
    if (options === undefined) {
      if (this.tally.waiting === 0 && this.#takeOrWait(1) === 0) return granted;
      return takeWaiting(this, '', {
        n: 1,
        signal: undefined,
        maxWaitMs: Infinity,
        expiresAt: Infinity,
      });
    }
    return takeWaiting(this, '', readTake(options, this.burst));
  }

  lineFor(): PacingLine {
    return this.#line;
  }

  openLine(): PacingLine {
    return this.#line;
  }

  takeOrWait(_key: string, n: number): number {
    return this.#takeOrWait(n);
  }

  refused(_key: string, _n: number, retryAfterMs: number): void {
    if (this.#throttle.size > 0) this.#throttle.emit({ tokens: this.#tokens, retryAfterMs });
  }

  #takeOrWait(n: number): number {
    this.#refill();
    const tokens = this.#tokens;
    if (tokens + tokenEpsilon >= n) {
      this.#tokens = tokens - n;
      return 0;
    }
    return waitMs(n - tokens, this.#ratePerMs);
  }

  /**
   * The line's take for its oldest waiter. A bucket with a line never reaches its cap (the
   * tokens go to the waiters as they come), so the refill is counted uncapped and the cap applied
   * only once the last waiter is served: each waiter is served as of the moment its tokens were
   * due, and a timer that fires late (or on the next whole millisecond) loses nothing.
   */
  #serveWaiter(n: number): number {
    const now = this.clock.now();
    const elapsed = now - this.#updatedAt;
    const tokens = elapsed > 0 ? this.#tokens + elapsed * this.#ratePerMs : this.#tokens;
    this.#updatedAt = now;
    if (tokens + tokenEpsilon >= n) {
      const left = tokens - n;
      this.#tokens = left < this.burst || this.tally.waiting > 1 ? left : this.burst;
      return 0;
    }
    this.#tokens = tokens;
    return waitMs(n - tokens, this.#ratePerMs);
  }

  #refuse(tokens: number, retryAfterMs: number): TakeResult {
    if (this.#throttle.size > 0) this.#throttle.emit({ tokens, retryAfterMs });
    return { ok: false, retryAfterMs };
  }

  #refill(): void {
    const now = this.clock.now();
    const elapsed = now - this.#updatedAt;
    if (elapsed > 0) {
      const tokens = this.#tokens + elapsed * this.#ratePerMs;
      this.#tokens = tokens < this.burst ? tokens : this.burst;
      this.#updatedAt = now;
    }
  }
}
