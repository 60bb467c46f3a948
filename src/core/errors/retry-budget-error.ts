/** Thrown when a caller's retry budget refuses a retry: the end of the line for this request. */
import { errorCodes } from './codes.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Options of {@link RetryBudgetExhaustedError}. */
export interface RetryBudgetExhaustedErrorOptions extends SpillwayErrorOptions {
  /** Attempts made before the budget said no. */
  readonly attempts: number;
  /** Which dependency, if known. */
  readonly dependency?: string | undefined;
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
  /** Never set: no wait makes a retry welcome while the budget is spent. */
  readonly retryAfterMs: number | undefined = undefined;
  readonly attempts: number;
  readonly dependency: string | undefined;

  constructor(options: RetryBudgetExhaustedErrorOptions) {
    super(
      errorCodes.retryBudget,
      `Retry budget${options.dependency === undefined ? '' : ` for ${options.dependency}`} spent after ${options.attempts} attempt(s); not retrying`,
      options,
    );
    this.attempts = options.attempts;
    this.dependency = options.dependency;
  }
}
