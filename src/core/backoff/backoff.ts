/**
 * Full-jitter exponential backoff (AWS Architecture Blog): the n-th retry waits a uniform
 * random time in `[0, min(capMs, baseMs × 2^n))`. Two rules on top: never sooner than a
 * `Retry-After` the callee gave (the jitter is added on top of it, so callers told the same
 * time do not come back in one burst), and never past the caller's deadline — if the wait would
 * cross it, the answer is "fail now".
 *
 * @module
 */
import { SpillwayConfigError } from '../errors/config-error.js';
import { nonNegativeNumber, optionsObject, positiveNumber } from '../internal/validate.js';

/** Options of {@link backoff}. */
export interface BackoffOptions {
  /** Upper bound of the first retry's wait, in ms; doubles per retry. @default 100 */
  readonly baseMs?: number;
  /** Largest jittered wait, in ms. @default 1_000 */
  readonly capMs?: number;
  /**
   * Longest `Retry-After` worth waiting for, in ms. A callee asking for more is not retried
   * now (its refusal is passed up with its `retryAfterMs`). @default 30_000
   */
  readonly maxRetryAfterMs?: number;
  /** A source of uniform numbers in [0, 1), for tests. @default Math.random */
  readonly random?: () => number;
}

/** What {@link Backoff.next} needs to know about the retry ahead. */
export interface BackoffInput {
  /** 0 for the first retry, 1 for the second… */
  readonly retry: number;
  /** The callee's `Retry-After` (or pushback), in ms, if it gave one. */
  readonly retryAfterMs?: number | undefined;
  /** Time left before the caller's deadline, in ms; undefined when there is none. */
  readonly remainingMs?: number | undefined;
}

/**
 * Wait this long, or do not retry: `deadline` when the wait would reach the caller's deadline,
 * `retry-after` when the callee asked for longer than `maxRetryAfterMs`.
 */
export type BackoffDecision =
  | { readonly ok: true; readonly delayMs: number }
  | { readonly ok: false; readonly reason: 'deadline' | 'retry-after' };

/** A backoff schedule. */
export interface Backoff {
  /** The wait before the retry described by `input`, or why not to retry. */
  next(input: BackoffInput): BackoffDecision;
  readonly baseMs: number;
  readonly capMs: number;
  readonly maxRetryAfterMs: number;
}

const defaults = { baseMs: 100, capMs: 1_000, maxRetryAfterMs: 30_000 } as const;

/**
 * Creates a full-jitter backoff.
 *
 * @example
 * const b = backoff({ baseMs: 100, capMs: 2_000 });
 * const d = b.next({ retry: 0, retryAfterMs: 1_000, remainingMs: 5_000 });
 * if (d.ok) await clock.sleep(d.delayMs); // somewhere in [1000, 1100)
 */
export function backoff(options?: BackoffOptions): Backoff {
  const o = optionsObject('backoff options', options);
  const baseMs = positiveNumber('baseMs', o.baseMs ?? defaults.baseMs);
  const capMs = positiveNumber('capMs', o.capMs ?? defaults.capMs);
  if (capMs < baseMs) {
    throw new SpillwayConfigError('capMs', `at least baseMs (${baseMs})`, capMs);
  }
  const maxRetryAfterMs = nonNegativeNumber(
    'maxRetryAfterMs',
    o.maxRetryAfterMs ?? defaults.maxRetryAfterMs,
  );
  const random = o.random ?? Math.random;
  if (typeof random !== 'function') {
    throw new SpillwayConfigError('random', 'a function returning numbers in [0, 1)', random);
  }
  return new FullJitter({ baseMs, capMs, maxRetryAfterMs, random });
}

/** True for anything with a `next` method (an object given as `backoff` is used as is). */
export function isBackoff(value: unknown): value is Backoff {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { next?: unknown }).next === 'function'
  );
}

const deadlineReached: BackoffDecision = Object.freeze({ ok: false, reason: 'deadline' });
const retryAfterTooLong: BackoffDecision = Object.freeze({ ok: false, reason: 'retry-after' });

class FullJitter implements Backoff {
  readonly baseMs: number;
  readonly capMs: number;
  readonly maxRetryAfterMs: number;
  readonly #random: () => number;

  constructor(s: Required<BackoffOptions>) {
    this.baseMs = s.baseMs;
    this.capMs = s.capMs;
    this.maxRetryAfterMs = s.maxRetryAfterMs;
    this.#random = s.random;
  }

  next(input: BackoffInput): BackoffDecision {
    // Past 2^64 every ceiling is the cap; NaN and negatives count as the first retry.
    const n = input.retry >= 0 ? Math.min(Math.floor(input.retry), 64) : 0;
    const ceiling = Math.min(this.capMs, this.baseMs * 2 ** n);
    let r = this.#random();
    // A broken random source must not produce a negative or endless wait.
    if (!(r >= 0)) r = 0;
    else if (r >= 1) r = 1;
    let delayMs = r * ceiling;
    const hint = input.retryAfterMs;
    // Hostile or broken hints (negative, NaN) are ignored; Infinity is "too long".
    if (typeof hint === 'number' && hint >= 0) {
      if (hint > this.maxRetryAfterMs) return retryAfterTooLong;
      delayMs += hint;
    }
    const remaining = input.remainingMs;
    if (remaining !== undefined && !(delayMs < remaining)) return deadlineReached;
    return { ok: true, delayMs };
  }
}
