/**
 * The refusal of a line of waiters that is full: a token bucket's `take` or a credit gate's
 * `send` found `maxWaiting` callers already waiting. Distinct from `SPILLWAY_E_QUEUE_FULL`,
 * which is a concurrency limit's line.
 *
 * @module
 */
import { errorCodes } from './codes.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Options of {@link WaitLineFullError}. */
export interface WaitLineFullErrorOptions extends SpillwayErrorOptions {
  /** The bound that was hit. */
  readonly maxWaiting: number;
  /** When the line ahead would have been served, in ms, if the primitive can tell. */
  readonly retryAfterMs?: number | undefined;
}

/** A line of waiters was full; the caller did not join it and nothing was taken. */
export class WaitLineFullError extends SpillwayError {
  static override readonly code = errorCodes.waitLineFull;
  /**
   * Always `later`: the line drains at its own pace, so a caller passing this error up (a
   * paced `dependency()`, say) tells its own caller to come back, not to give up.
   */
  readonly signal: RetrySignal = 'later';
  /** The bound that was hit (`maxWaiting`). */
  readonly maxWaiting: number;
  /** Milliseconds until the line ahead would have been served, when known (pacing). */
  readonly retryAfterMs: number | undefined;

  constructor(options: WaitLineFullErrorOptions) {
    super(
      errorCodes.waitLineFull,
      `The line of waiters is full (maxWaiting ${options.maxWaiting})`,
      options,
    );
    this.maxWaiting = options.maxWaiting;
    this.retryAfterMs = options.retryAfterMs;
  }
}
