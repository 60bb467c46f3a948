/** Thrown when a caller's circuit breaker refuses a call without sending it. */
import { errorCodes } from './codes.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Options of {@link CircuitOpenError}. */
export interface CircuitOpenErrorOptions extends SpillwayErrorOptions {
  /** Time until the breaker lets a probe through, when known. */
  readonly retryAfterMs?: number | undefined;
  /** Which dependency, if known. */
  readonly dependency?: string | undefined;
}

/**
 * The breaker in front of a dependency is open (cooling down after sustained failures), or it
 * is half-open and its probes are already taken. The call was refused at once, never queued.
 * `signal` is `later`; `retryAfterMs` is the rest of the cool-down when the breaker knows it.
 */
export class CircuitOpenError extends SpillwayError {
  static override readonly code = errorCodes.circuitOpen;
  readonly signal: RetrySignal = 'later';
  readonly retryAfterMs: number | undefined;
  readonly dependency: string | undefined;
  /** Nothing was sent. */
  readonly attempts = 0;

  constructor(options?: CircuitOpenErrorOptions) {
    super(
      errorCodes.circuitOpen,
      `Circuit${options?.dependency === undefined ? '' : ` for ${options.dependency}`} is open; call refused without sending it`,
      options,
    );
    this.retryAfterMs = options?.retryAfterMs;
    this.dependency = options?.dependency;
  }
}
