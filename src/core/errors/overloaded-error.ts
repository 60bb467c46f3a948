/**
 * The caller-side view of a refusal: what the callee (or a layer below) said to do next. The
 * HTTP guard maps these to its own caller's signal, so retries happen at one layer only.
 *
 * @module
 */
import { errorCodes } from './codes.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/**
 * What a refused caller should do next (the `Spillway-Retry` header):
 * `later` — same target, after `retryAfterMs`; `elsewhere` — another replica, now;
 * `never` — retrying will not help (deadline spent, or a layer below already retried).
 */
export type RetrySignal = 'later' | 'elsewhere' | 'never';

/** The three signals, for validation. */
export const retrySignals: readonly RetrySignal[] = ['later', 'elsewhere', 'never'];

/** Options of {@link DependencyOverloadedError}. */
export interface DependencyOverloadedErrorOptions extends SpillwayErrorOptions {
  readonly signal: RetrySignal;
  readonly retryAfterMs?: number | undefined;
  /** Which dependency refused, if known. */
  readonly dependency?: string | undefined;
  /** Attempts made before giving up (1 = no retry). @default 1 */
  readonly attempts?: number | undefined;
  /** The dependency's HTTP status, if it answered over HTTP. */
  readonly status?: number | undefined;
}

/** A dependency refused or failed in a way the caller's own caller must hear about. */
export class DependencyOverloadedError extends SpillwayError {
  static override readonly code = errorCodes.overloaded;
  /** What the caller upstream should do next. */
  readonly signal: RetrySignal;
  /** When a retry could succeed, if known. */
  readonly retryAfterMs: number | undefined;
  readonly dependency: string | undefined;
  readonly attempts: number;
  readonly status: number | undefined;

  constructor(message: string, options: DependencyOverloadedErrorOptions) {
    super(errorCodes.overloaded, message, options);
    this.signal = options.signal;
    this.retryAfterMs = options.retryAfterMs;
    this.dependency = options.dependency;
    this.attempts = options.attempts ?? 1;
    this.status = options.status;
  }
}
