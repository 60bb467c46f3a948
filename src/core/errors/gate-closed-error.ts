/**
 * The answer a sender gets from a credit gate that will move nothing more: its receiver
 * cancelled (Reactive Streams `cancel`) or its sender completed.
 *
 * @module
 */
import { errorCodes } from './codes.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Why a credit gate closed. */
export type GateClosedReason = 'cancelled' | 'completed';

/** The credit gate is closed; `reason` says who closed it, `cause` what the receiver gave. */
export class GateClosedError extends SpillwayError {
  static override readonly code = errorCodes.gateClosed;
  /** `cancelled` (the receiver wants nothing more) or `completed` (the sender said it is done). */
  readonly reason: GateClosedReason;

  constructor(reason: GateClosedReason, options?: SpillwayErrorOptions) {
    super(
      errorCodes.gateClosed,
      reason === 'cancelled'
        ? 'The receiver cancelled: send nothing more'
        : 'The sender completed: nothing more can be sent',
      options,
    );
    this.reason = reason;
  }
}
