/**
 * One class per reason a concurrency limit refuses, so `instanceof QueueFullError` and
 * `err.code === 'SPILLWAY_E_QUEUE_FULL'` both work. They share {@link RejectedError}.
 *
 * @module
 */
import { errorCodes, type SpillwayErrorCode } from './codes.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Why a limit refused to admit work. */
export type RejectionReason = 'queue-full' | 'queue-timeout' | 'deadline' | 'aborted' | 'shed';

/** Options every rejection error accepts. */
export interface RejectedErrorOptions extends SpillwayErrorOptions {
  /** When a retry could succeed, if the limiter can tell. */
  readonly retryAfterMs?: number | undefined;
}

/** Common shape of a concurrency refusal. */
export abstract class RejectedError extends SpillwayError {
  static override readonly family: readonly SpillwayErrorCode[] = [
    errorCodes.queueFull,
    errorCodes.queueTimeout,
    errorCodes.deadline,
    errorCodes.aborted,
    errorCodes.shed,
  ];
  /** Why the work was refused. */
  abstract readonly reason: RejectionReason;
  /** When a retry could succeed, if the limiter can tell. */
  readonly retryAfterMs: number | undefined;

  protected constructor(code: SpillwayErrorCode, message: string, options?: RejectedErrorOptions) {
    super(code, message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** Every slot was taken and the line was full. */
export class QueueFullError extends RejectedError {
  static override readonly code = errorCodes.queueFull;
  readonly reason = 'queue-full';
  constructor(options?: RejectedErrorOptions) {
    super(errorCodes.queueFull, 'Every slot is taken and the line is full', options);
  }
}

/** The waiter spent its whole allowed wait in line. */
export class QueueTimeoutError extends RejectedError {
  static override readonly code = errorCodes.queueTimeout;
  readonly reason = 'queue-timeout';
  constructor(options?: RejectedErrorOptions) {
    super(errorCodes.queueTimeout, 'Waited in line for longer than allowed', options);
  }
}

/** The deadline passed, or would pass before a slot could be had. */
export class DeadlineExceededError extends RejectedError {
  static override readonly code = errorCodes.deadline;
  readonly reason = 'deadline';
  constructor(options?: RejectedErrorOptions) {
    super(errorCodes.deadline, 'The deadline passed before the work could finish', options);
  }
}

/** The caller's signal aborted while waiting. */
export class AbortedError extends RejectedError {
  static override readonly code = errorCodes.aborted;
  readonly reason = 'aborted';
  constructor(options?: RejectedErrorOptions) {
    super(errorCodes.aborted, 'The caller aborted', options);
  }
}

/** The waiter was displaced from a full line by more critical work. */
export class ShedError extends RejectedError {
  static override readonly code = errorCodes.shed;
  readonly reason = 'shed';
  constructor(options?: RejectedErrorOptions) {
    super(errorCodes.shed, 'Displaced by more critical work', options);
  }
}

const byReason = {
  'queue-full': QueueFullError,
  'queue-timeout': QueueTimeoutError,
  deadline: DeadlineExceededError,
  aborted: AbortedError,
  shed: ShedError,
} as const satisfies Record<RejectionReason, new (options?: RejectedErrorOptions) => RejectedError>;

/** Builds the error matching a rejection value, for the throwing convenience paths. */
export function rejectionError(
  reason: RejectionReason,
  options?: RejectedErrorOptions,
): RejectedError {
  return new byReason[reason](options);
}
