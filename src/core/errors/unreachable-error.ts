/** Thrown when a dependency cannot be reached at the network level. */
import { errorCodes } from './codes.js';
import { networkDetail } from './failure-summary.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Options of {@link DependencyUnreachableError}. */
export interface DependencyUnreachableErrorOptions extends SpillwayErrorOptions {
  /**
   * False when the request certainly never left this process (connection refused, DNS
   * failure, connect timeout): retrying it is safe whatever the method.
   */
  readonly sent: boolean;
  /** Which dependency, if known. */
  readonly dependency?: string | undefined;
  /** Attempts made, this one included. @default 1 */
  readonly attempts?: number | undefined;
}

/**
 * The network failed: nothing, or no complete answer, came back. `cause` is the transport's
 * error. When `sent` is false the request never left, so it is retried even if not idempotent
 * (`signal: 'elsewhere'`); when it may have been sent it is not retried (`signal: 'later'`).
 */
export class DependencyUnreachableError extends SpillwayError {
  static override readonly code = errorCodes.unreachable;
  readonly signal: RetrySignal;
  readonly retryAfterMs: number | undefined = undefined;
  readonly sent: boolean;
  readonly dependency: string | undefined;
  readonly attempts: number;

  constructor(options: DependencyUnreachableErrorOptions) {
    const detail = networkDetail(options.cause);
    const notes = [detail, options.sent ? undefined : 'request not sent'].filter(Boolean);
    super(
      errorCodes.unreachable,
      `${options.dependency ?? 'Dependency'} unreachable${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`,
      options,
    );
    this.sent = options.sent;
    this.signal = options.sent ? 'later' : 'elsewhere';
    this.dependency = options.dependency;
    this.attempts = options.attempts ?? 1;
  }
}
