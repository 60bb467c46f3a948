/**
 * Thrown by the throwing convenience paths of `spillway/redis` when Redis could not be asked
 * and the failure policy is `closed`. Hot paths return `reason: 'store-unavailable'` instead.
 *
 * @module
 */
import { errorCodes } from '../core/errors/codes.js';
import { SpillwayError, type SpillwayErrorOptions } from '../core/errors/spillway-error.js';

/** A limit kept in Redis could not be checked, and its policy refuses in that case. */
export class StoreUnavailableError extends SpillwayError {
  static override readonly code = errorCodes.storeUnavailable;
  readonly reason = 'store-unavailable';

  constructor(options?: SpillwayErrorOptions) {
    super(errorCodes.storeUnavailable, 'The shared limit store could not be asked', options);
  }
}
