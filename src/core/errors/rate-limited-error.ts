/** Thrown by the convenience (throwing) paths when a quota refuses. */
import { errorCodes } from './codes.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** A client's quota is spent; `retryAfterMs` says when the request could succeed. */
export class RateLimitedError extends SpillwayError {
  static override readonly code = errorCodes.rateLimited;
  /** Milliseconds until enough tokens are due. */
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number, options?: SpillwayErrorOptions) {
    super(errorCodes.rateLimited, `Rate limited; retry after ${retryAfterMs} ms`, options);
    this.retryAfterMs = retryAfterMs;
  }
}
