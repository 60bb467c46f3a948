/**
 * What a consumer does with a message once its handler has settled: core's one rule for
 * brokers (`settleMessage`), spelt the RabbitMQ way. RabbitMQ has no delayed `nack`, so a
 * message refused downstream is *held* (unacknowledged, its permit kept) for `retryAfterMs` and
 * then requeued; holding it is the slow-down, because prefetch equals permits.
 *
 * @module
 */
import { settleMessage, type GiveUpReason, type MessageEnd } from '../core/retry/settle-message.js';

/** Why a message was dead-lettered (`nack` without requeue). */
export type DeadLetterReason = GiveUpReason;

/** What to do with a settled message. */
export type Settlement =
  | { readonly action: 'ack' }
  /** `nack` with requeue after holding the message (and its permit) for `afterMs`. */
  | { readonly action: 'requeue'; readonly afterMs: number }
  | { readonly action: 'dead-letter'; readonly reason: DeadLetterReason };

/** How the handler ended (`expired`: past the message's deadline, its signal aborted). */
export type HandlerOutcome = MessageEnd;

/** The facts the rule reads besides the outcome. */
export interface SettleFacts {
  /** The broker says it delivered this message before (`fields.redelivered`). */
  readonly redelivered: boolean;
  /** Ms left before the message's deadline (≤ 0: past it). */
  readonly remainingMs: number;
  /** Hold used for a `later` refusal that names no `retryAfterMs`, in ms. */
  readonly defaultRetryAfterMs: number;
}

/**
 * The rule (`settleMessage`) with RabbitMQ's facts: the deadline is the message's life (a
 * handler past it is dead-lettered `expired`); a plain failure is requeued at once, and
 * dead-lettered `failed` when it was already redelivered; `elsewhere` is requeued now the first
 * time, then held as `later` (no hot loop).
 */
export function settle(outcome: HandlerOutcome, facts: SettleFacts): Settlement {
  const s = settleMessage(outcome, {
    lifeLeftMs: !outcome.ok && outcome.expired ? 0 : facts.remainingMs,
    lastDelivery: facts.redelivered,
    failureRetryMs: 0,
    refusalRetryMs: facts.defaultRetryAfterMs,
    elsewhereNow: !facts.redelivered,
  });
  if (s.action === 'ack') return s;
  return s.action === 'retry'
    ? { action: 'requeue', afterMs: s.afterMs }
    : { action: 'dead-letter', reason: s.reason };
}
