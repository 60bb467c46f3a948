/** Thrown when a caller's adaptive throttle refuses a call locally (SRE client-side throttling). */
import { errorCodes } from './codes.js';
import { summaryOf } from './failure-summary.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Options of {@link ThrottledError}. */
export interface ThrottledErrorOptions extends SpillwayErrorOptions {
  /** The probability with which calls of this criticality were being refused. */
  readonly rejectProbability: number;
  /** Which dependency, if known. */
  readonly dependency?: string | undefined;
  /** Attempts made before the throttle refused the next one: 0 when it refused the first. @default 0 */
  readonly attempts?: number | undefined;
  /** The dependency's HTTP status in the last attempt, if one was made over HTTP. */
  readonly status?: number | undefined;
  /** The wait the dependency asked for in the last attempt, if it said. */
  readonly retryAfterMs?: number | undefined;
}

/**
 * The dependency has been refusing most calls of this criticality lately, so this attempt was
 * refused before it was sent: a call's first attempt (with `throttleFirstAttempts`), or a retry
 * after the dependency refused the attempt before it — then `attempts`, `status` and
 * `retryAfterMs` say what that attempt got, and `cause` is its failure. `signal` is `never`:
 * the dependency is overloaded as a whole and retrying above would only add load.
 */
export class ThrottledError extends SpillwayError {
  static override readonly code = errorCodes.throttled;
  readonly signal: RetrySignal = 'never';
  /**
   * The wait the dependency asked for in the last attempt, if one was made and it said — for
   * the record: the signal stays `never`, so a guard passing this error up sends no `Retry-After`.
   */
  readonly retryAfterMs: number | undefined;
  /** The dependency's HTTP status in the last attempt, if one was made over HTTP. */
  readonly status: number | undefined;
  readonly rejectProbability: number;
  readonly dependency: string | undefined;
  /** Attempts sent before this refusal: 0 when the first was refused. */
  readonly attempts: number;

  constructor(options: ThrottledErrorOptions) {
    const attempts = options.attempts ?? 0;
    const d = options.dependency;
    super(
      errorCodes.throttled,
      (attempts === 0
        ? `Throttled locally${d === undefined ? '' : ` before calling ${d}`}`
        : `Throttled locally before retrying${d === undefined ? '' : ` ${d}`} after ${attempts} attempt(s)`) +
        ` (reject probability ${options.rejectProbability.toFixed(2)})` +
        (options.cause === undefined ? '' : `; the last: ${summaryOf(options.cause)}`),
      options,
    );
    this.rejectProbability = options.rejectProbability;
    this.dependency = options.dependency;
    this.attempts = attempts;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}
