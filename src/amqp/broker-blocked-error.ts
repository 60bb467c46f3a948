/**
 * The refusal of `spillway/amqp`'s publisher while RabbitMQ blocks its connection
 * (`connection.blocked`, sent when a memory or disk alarm fires). A publish sent now would
 * hang until the alarm clears, so it is refused before it is sent.
 *
 * @module
 */
import { errorCodes } from '../core/errors/codes.js';
import type { RetrySignal } from '../core/errors/overloaded-error.js';
import { SpillwayError, type SpillwayErrorOptions } from '../core/errors/spillway-error.js';

/** Options of {@link BrokerBlockedError}. */
export interface BrokerBlockedErrorOptions extends SpillwayErrorOptions {
  /** The broker's reason, e.g. `low on memory`, when it gave one. */
  readonly detail?: string | undefined;
  /** When a retry could succeed, in ms, if known. */
  readonly retryAfterMs?: number | undefined;
}

/** The broker blocks this connection's publishes; nothing was sent. Retry later. */
export class BrokerBlockedError extends SpillwayError {
  static override readonly code = errorCodes.brokerBlocked;
  /** Always `later`: the connection is unblocked once the broker's alarm clears. */
  readonly signal: RetrySignal = 'later';
  /** The broker's reason (`low on memory`, `low on disk`), when it gave one. */
  readonly detail: string | undefined;
  /** Milliseconds after which a retry could succeed, when known. */
  readonly retryAfterMs: number | undefined;

  constructor(options?: BrokerBlockedErrorOptions) {
    super(
      errorCodes.brokerBlocked,
      `The broker blocks publishing on this connection${options?.detail === undefined ? '' : ` (${options.detail})`}`,
      options,
    );
    this.detail = options?.detail;
    this.retryAfterMs = options?.retryAfterMs;
  }
}
