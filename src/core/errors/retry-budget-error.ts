/** Thrown when a caller's retry budget refuses a retry: the end of the line for this request. */
import { errorCodes } from './codes.js';
import { summaryOf } from './failure-summary.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Options of {@link RetryBudgetExhaustedError}. */
export interface RetryBudgetExhaustedErrorOptions extends SpillwayErrorOptions {
  /** Attempts made before the budget said no. */
  readonly attempts: number;
  /** Which dependency, if known. */
  readonly dependency?: string | undefined;
  /** The dependency's HTTP status in the last attempt, if it answered over HTTP. */
  readonly status?: number | undefined;
  /** The wait the dependency asked for in the last attempt, if it said. */
  readonly retryAfterMs?: number | undefined;
}

/**
 * The retry budget shared by every retry layer calling this dependency is spent: too many of
 * its recent calls failed. `signal` is always `never`, so no layer above retries either; `cause`
 * is the last attempt's failure.
 */
export class RetryBudgetExhaustedError extends SpillwayError {
  static override readonly code = errorCodes.retryBudget;
  /** Always `never`: retrying anywhere above would multiply the load. */
  readonly signal: RetrySignal = 'never';
  /**
   * The wait the dependency asked for in its last answer, if it said — for the record: the
   * signal stays `never`, so a guard passing this error up sends no `Retry-After`.
   */
  readonly retryAfterMs: number | undefined;
  /** The dependency's HTTP status in the last attempt, if it answered over HTTP. */
  readonly status: number | undefined;
  readonly attempts: number;
  readonly dependency: string | undefined;

  constructor(options: RetryBudgetExhaustedErrorOptions) {
    super(
      errorCodes.retryBudget,
      `Retry budget${options.dependency === undefined ? '' : ` for ${options.dependency}`} spent after ${options.attempts} attempt(s); not retrying` +
        (options.cause === undefined ? '' : `; the last: ${summaryOf(options.cause)}`),
      options,
    );
    this.attempts = options.attempts;
    this.dependency = options.dependency;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}
