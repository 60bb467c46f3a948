/**
 * A take that waits, written once for one bucket and for keyed buckets: read the options, grant
 * at once when nobody waits and the tokens are there, refuse at once when the wait would outlast
 * `maxWaitMs` or the deadline or the line is full, and otherwise join the bucket's line.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { RateLimitedError } from '../errors/rate-limited-error.js';
import { DeadlineExceededError } from '../errors/rejected-error.js';
import { WaitLineFullError } from '../errors/wait-line-full-error.js';
import { rejectSoon } from '../internal/reject-soon.js';
import type { PacingLine, WaitTally } from './pacing-line.js';
import { takeProblem } from './token-bucket-math.js';

/** Options of a take that waits (`tokenBucket(...).take`, `keyedTokenBuckets(...).take`). */
export interface TakeOptions {
  /** Tokens to take; at most `burst` (a larger take is refused at once). @default 1 */
  readonly n?: number | undefined;
  /**
   * Leaves the line as soon as it aborts: the promise rejects with `signal.reason`, and the
   * listener is removed however the take ends.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * The longest wait accepted, in ms. A take whose tokens would be due later is refused at
   * once with `RateLimitedError` (`retryAfterMs`: the wait it would have needed), never after
   * waiting. @default Infinity (the line's length, `maxWaiting`, still bounds the wait)
   */
  readonly maxWaitMs?: number | undefined;
  /**
   * An absolute deadline on the bucket's clock, or a `Deadline`. A take that could not be
   * granted before it is refused at once with `DeadlineExceededError`. A `Deadline`'s signal is
   * used when `signal` is not given.
   */
  readonly deadline?:
    number | { readonly expiresAt: number; readonly signal?: AbortSignal | undefined } | undefined;
}

/** A take's options, read and checked. */
export interface ReadTake {
  readonly n: number;
  readonly signal: AbortSignal | undefined;
  readonly maxWaitMs: number;
  readonly expiresAt: number;
}

/** Reads `options`: the take, or the {@link SpillwayArgumentError} naming the bad option. */
export function readTake(options: TakeOptions, burst: number): ReadTake | SpillwayArgumentError {
  if (typeof options !== 'object' || options === null) {
    return new SpillwayArgumentError('options', 'an options object', options);
  }
  const n = options.n ?? 1;
  const problem = n === 1 ? undefined : takeProblem(n, burst);
  if (problem !== undefined) return problem;
  const maxWaitMs = options.maxWaitMs ?? Infinity;
  if (typeof maxWaitMs !== 'number' || !(maxWaitMs >= 0)) {
    return new SpillwayArgumentError('maxWaitMs', 'a number of 0 or more (ms)', maxWaitMs);
  }
  let signal = options.signal;
  let expiresAt = Infinity;
  const d = options.deadline;
  if (typeof d === 'number') expiresAt = d;
  else if (typeof d === 'object' && d !== null) {
    expiresAt = d.expiresAt;
    signal ??= d.signal;
  } else if (d !== undefined) {
    return new SpillwayArgumentError('deadline', 'a time on the clock or a Deadline', d);
  }
  if (typeof expiresAt !== 'number' || Number.isNaN(expiresAt)) {
    return new SpillwayArgumentError('deadline', 'a time on the clock or a Deadline', d);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    return new SpillwayArgumentError('signal', 'an AbortSignal', signal);
  }
  return { n, signal, maxWaitMs, expiresAt };
}

/** What {@link takeWaiting} needs of a bucket (`key` is ignored by a single bucket). */
export interface PaceHost {
  readonly clock: Clock;
  readonly maxWaiting: number;
  readonly tally: WaitTally;
  /** The line standing for `key`, if any. */
  lineFor(key: string): PacingLine | undefined;
  /** Takes now: 0, or ms until due (nothing taken); a promise is a remote store's whole answer. */
  takeOrWait(key: string, n: number): number | Promise<void>;
  /** Opens `key`'s line for a first waiter; undefined when no more lines may open. */
  openLine(key: string): PacingLine | undefined;
  /** Told of a take refused because its wait was too long (for `onThrottle`). */
  refused(key: string, n: number, retryAfterMs: number): void;
}

/** The one promise every take granted at once returns: granting allocates nothing. */
export const granted: Promise<void> = Promise.resolve();

/** The waiting take itself (see {@link TakeOptions} for what each refusal means). */
export function takeWaiting(
  host: PaceHost,
  key: string,
  t: ReadTake | SpillwayArgumentError,
): Promise<void> {
  if (t instanceof SpillwayArgumentError) return Promise.reject(t);
  const { n, signal, expiresAt } = t;
  if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
  const now = host.clock.now();
  if (expiresAt <= now) return rejectSoon(new DeadlineExceededError());
  const line = host.lineFor(key);
  let ms: number;
  if (line === undefined || line.size === 0) {
    const answer = host.takeOrWait(key, n);
    if (answer === 0) return granted;
    if (typeof answer !== 'number') return answer;
    ms = answer;
  } else {
    ms = line.waitBehind(n, now);
  }
  if (now + ms > expiresAt) return rejectSoon(new DeadlineExceededError());
  if (ms > t.maxWaitMs) {
    host.refused(key, n, ms);
    return rejectSoon(new RateLimitedError(ms));
  }
  const joined = host.tally.waiting < host.maxWaiting ? (line ?? host.openLine(key)) : undefined;
  if (joined === undefined) {
    return rejectSoon(new WaitLineFullError({ maxWaiting: host.maxWaiting, retryAfterMs: ms }));
  }
  return joined.join(n, signal, ms);
}
