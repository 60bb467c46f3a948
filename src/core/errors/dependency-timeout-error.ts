/** Thrown when one attempt outlives its `timeoutMs` and is cancelled. */
import { errorCodes } from './codes.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Options of {@link DependencyTimeoutError}. */
export interface DependencyTimeoutErrorOptions extends SpillwayErrorOptions {
  readonly timeoutMs: number;
  /** Which dependency, if known. */
  readonly dependency?: string | undefined;
  /** Attempts made, this one included. @default 1 */
  readonly attempts?: number | undefined;
}

/**
 * An attempt took longer than `timeoutMs`; its request was aborted (the socket released). The
 * dependency may have done the work, so it is not retried by default. `signal` is `later`.
 */
export class DependencyTimeoutError extends SpillwayError {
  static override readonly code = errorCodes.dependencyTimeout;
  readonly signal: RetrySignal = 'later';
  readonly retryAfterMs: number | undefined = undefined;
  readonly timeoutMs: number;
  readonly dependency: string | undefined;
  readonly attempts: number;

  constructor(options: DependencyTimeoutErrorOptions) {
    super(
      errorCodes.dependencyTimeout,
      `${options.dependency ?? 'Dependency'} did not answer within ${options.timeoutMs} ms; the attempt was cancelled`,
      options,
    );
    this.timeoutMs = options.timeoutMs;
    this.dependency = options.dependency;
    this.attempts = options.attempts ?? 1;
  }
}
