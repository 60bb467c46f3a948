/**
 * The refusal that stands for a consumer's backlog: a producer-side `lagGate` found the lag (or
 * the age of the oldest waiting message) over its bound, or a broker refused a publish because
 * the queue or stream is full (JetStream `discard: new`, RabbitMQ `reject-publish`). Either way
 * the message was not taken and the signal is `later`.
 *
 * @module
 */
import { errorCodes } from './codes.js';
import type { RetrySignal } from './overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from './spillway-error.js';

/** Who refused: this process's lag gate, or the broker itself. */
export type BacklogRefusedBy = 'gate' | 'broker';

/** Options of {@link BacklogFullError}. */
export interface BacklogFullErrorOptions extends SpillwayErrorOptions {
  /** `gate` (a `lagGate` refused) or `broker` (the broker refused the publish). */
  readonly by: BacklogRefusedBy;
  /** When the backlog should have room again, in ms, if it can be told. */
  readonly retryAfterMs?: number | undefined;
  /** What the refusal said (the broker's own description), for logs. */
  readonly detail?: string | undefined;
}

/** The backlog behind a consumer is full: nothing was published; try again later. */
export class BacklogFullError extends SpillwayError {
  static override readonly code = errorCodes.backlogFull;
  /** Always `later`: the same target will have room once the consumer catches up. */
  readonly signal: RetrySignal = 'later';
  /** Who refused. */
  readonly by: BacklogRefusedBy;
  /** Milliseconds until the backlog should have room, when known. */
  readonly retryAfterMs: number | undefined;
  /** What the refusal said, when known. */
  readonly detail: string | undefined;

  constructor(options: BacklogFullErrorOptions) {
    super(
      errorCodes.backlogFull,
      options.by === 'gate'
        ? 'The consumer is behind: the lag gate refused the message'
        : `The broker refused the message: the backlog is full${options.detail === undefined ? '' : ` (${options.detail})`}`,
      options,
    );
    this.by = options.by;
    this.retryAfterMs = options.retryAfterMs;
    this.detail = options.detail;
  }
}
