/**
 * The permit consumer's public shapes: its options, what a handler is given, and the running
 * consumer.
 *
 * @module
 */
import type { Clock } from '../core/clock/clock.js';
import type { ConcurrencyLimit } from '../core/concurrency-limit/types.js';
import type { Event } from '../core/events/emitter.js';
import type { JetStreamMessageLike, PullConsumerLike } from './nats-like.js';
import type { NatsSettlement } from './settle.js';

/** What a handler is given besides the message. */
export interface MessageContext {
  /** Aborts at the message's deadline: the end of its life (`maxAgeMs`) or of its ack wait. */
  readonly signal: AbortSignal;
  /** That deadline, on the consumer's clock (ms). */
  readonly expiresAt: number;
}

/** Options of {@link consumeWithPermits}. */
export interface ConsumeWithPermitsOptions<M extends JetStreamMessageLike> {
  /** A pull consumer (`await js.consumers.get(stream, durable)`). Required. */
  readonly consumer: PullConsumerLike<M>;
  /** Most handlers running at once: a number or a `concurrencyLimit` (fixed or adaptive). Required. */
  readonly limit: number | ConcurrencyLimit;
  /**
   * Does the work. Resolving acks the message; rejecting follows the rule in `settle.ts`: a
   * refusal with `retryAfterMs` naks with that delay, a plain failure naks after `retryDelayMs`.
   * Required.
   */
  readonly handler: (message: M, context: MessageContext) => unknown;
  /**
   * A message older than this (from when the server stored it) is terminated unprocessed, and
   * a handler still running at that age is abandoned. @default undefined (no age bound)
   */
  readonly maxAgeMs?: number | undefined;
  /** Most messages one pull asks for (fewer when fewer permits are free). @default 100 */
  readonly batch?: number | undefined;
  /** How long one pull waits for messages, in ms (the server's minimum is 1 s). @default 5_000 */
  readonly expiresMs?: number | undefined;
  /**
   * Longest a handler may run, in ms, before its message is nak'd and its permit freed.
   * @default the consumer's `ack_wait` less a tenth (at most 1 s), or 30 s if it has none
   */
  readonly handlerTimeoutMs?: number | undefined;
  /** Redelivery delay after a failure that names none, in ms. @default 1_000 */
  readonly retryDelayMs?: number | undefined;
  /** Deliveries a failing message gets before it is terminated `failed`. @default 5 */
  readonly maxDeliveries?: number | undefined;
  /** Stops consuming when it aborts (like `stop()`). */
  readonly signal?: AbortSignal | undefined;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock | undefined;
}

/** Emitted when a message is settled (only built when somebody listens). */
export interface SettleEvent<M> {
  readonly message: M;
  readonly settlement: NatsSettlement;
  /** The handler's error, if it failed. */
  readonly error?: unknown;
}

/** Counts since the consumer started. */
export interface PermitConsumerCounts {
  readonly acked: number;
  readonly naked: number;
  readonly termed: number;
}

/** A running permit consumer. */
export interface PermitConsumer<M> {
  /**
   * Stops pulling, naks (for redelivery now) whatever arrives afterwards, and resolves when
   * every running handler has settled or passed its deadline. Idempotent.
   */
  stop(): Promise<void>;
  /** Resolves when stopped; rejects if pulling failed five times in a row. */
  readonly done: Promise<void>;
  /** Handlers running now (never above the limit). */
  readonly inFlight: number;
  readonly counts: PermitConsumerCounts;
  readonly onSettle: Event<SettleEvent<M>>;
}
