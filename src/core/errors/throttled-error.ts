/** Thrown when a caller's adaptive throttle refuses a call locally (SRE client-side throttling). */
import { errorCodes } from './codes.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Options of {@link ThrottledError}. */
export interface ThrottledErrorOptions extends SpillwayErrorOptions {
  /** The probability with which calls of this criticality were being refused. */
  readonly rejectProbability: number;
  /** Which dependency, if known. */
  readonly dependency?: string | undefined;
}

/**
 * The dependency has been refusing most calls of this criticality lately, so this one was
 * refused before it was sent. `signal` is `never`: the dependency is overloaded as a whole and
 * retrying above would only add load.
 */
export class ThrottledError extends SpillwayError {
  static override readonly code = errorCodes.throttled;
  readonly signal: RetrySignal = 'never';
  readonly retryAfterMs: number | undefined = undefined;
  readonly rejectProbability: number;
  readonly dependency: string | undefined;
  /** Nothing was sent. */
  readonly attempts = 0;

  constructor(options: ThrottledErrorOptions) {
    super(
      errorCodes.throttled,
      `Throttled locally${options.dependency === undefined ? '' : ` before calling ${options.dependency}`} (reject probability ${options.rejectProbability.toFixed(2)})`,
      options,
    );
    this.rejectProbability = options.rejectProbability;
    this.dependency = options.dependency;
  }
}
