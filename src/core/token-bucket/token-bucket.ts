/**
 * A token bucket with continuous refill. Decisions are values, a refused take consumes
 * nothing, and `retryAfterMs` is exact: the time until `n` tokens are due, rounded up.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import { clockLike, optionsObject, positiveInteger, positiveNumber } from '../internal/validate.js';

/** Options of {@link tokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens added per second, continuously. Required. */
  readonly ratePerSec: number;
  /** Capacity: the most tokens the bucket holds, and the largest single take. Required. */
  readonly burst: number;
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
  /** Takes `n` tokens (default 1) if they are there; otherwise consumes nothing. */
  tryTake(n?: number): TakeResult;
  /** Whole tokens available now. */
  readonly available: number;
  /** Tokens added per second. */
  readonly ratePerSec: number;
  /** Capacity. */
  readonly burst: number;
  /** Fires on each refusal. */
  readonly onThrottle: Event<ThrottleEvent>;
}

/**
 * Tolerance, in tokens, for floating-point drift: without it, waiting exactly `retryAfterMs`
 * could leave the bucket 1e-15 tokens short and refuse again.
 */
export const tokenEpsilon = 1e-6;

/**
 * Creates a token bucket that starts full.
 *
 * @example
 * const bucket = tokenBucket({ ratePerSec: 150, burst: 15 });
 * const r = bucket.tryTake();
 * if (!r.ok) reply429(r.retryAfterMs);
 */
export function tokenBucket(options: TokenBucketOptions): TokenBucket {
  const o = optionsObject('tokenBucket options', options);
  const ratePerSec = positiveNumber('ratePerSec', o.ratePerSec);
  const burst = positiveInteger('burst', o.burst);
  const clock = clockLike('clock', o.clock ?? systemClock);
  return new Bucket(ratePerSec, burst, clock);
}

class Bucket implements TokenBucket {
  readonly ratePerSec: number;
  readonly burst: number;
  readonly #ratePerMs: number;
  readonly #clock: Clock;
  #tokens: number;
  #updatedAt: number;
  readonly #throttle = new Emitter<ThrottleEvent>();
  readonly onThrottle = this.#throttle.event;

  constructor(ratePerSec: number, burst: number, clock: Clock) {
    this.ratePerSec = ratePerSec;
    this.burst = burst;
    this.#ratePerMs = ratePerSec / 1000;
    this.#clock = clock;
    this.#tokens = burst;
    this.#updatedAt = clock.now();
  }

  get available(): number {
    this.#refill();
    return Math.max(0, Math.floor(this.#tokens + tokenEpsilon));
  }

  tryTake(n = 1): TakeResult {
    if (n !== 1) checkTake(n, this.burst);
    this.#refill();
    const tokens = this.#tokens;
    if (tokens + tokenEpsilon >= n) {
      this.#tokens = tokens - n;
      return { ok: true, remaining: Math.max(0, Math.floor(tokens - n + tokenEpsilon)) };
    }
    const retryAfterMs = waitMs(n - tokens, this.#ratePerMs);
    if (this.#throttle.size > 0) this.#throttle.emit({ tokens, retryAfterMs });
    return { ok: false, retryAfterMs };
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsed = now - this.#updatedAt;
    if (elapsed > 0) {
      const tokens = this.#tokens + elapsed * this.#ratePerMs;
      this.#tokens = tokens < this.burst ? tokens : this.burst;
      this.#updatedAt = now;
    }
  }
}

/** Whole milliseconds until `missing` tokens are due at `ratePerMs`, never less than 1. */
export function waitMs(missing: number, ratePerMs: number): number {
  const ms = Math.ceil((missing - tokenEpsilon / 2) / ratePerMs);
  return ms < 1 ? 1 : ms;
}

/** `n` must be a positive integer no larger than `burst` (a larger take could never succeed). */
export function checkTake(n: unknown, burst: number): void {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new SpillwayArgumentError('n', 'a positive integer', n);
  }
  if (n > burst) {
    throw new SpillwayArgumentError(
      'n',
      `at most burst (${burst}); this take could never succeed`,
      n,
    );
  }
}
