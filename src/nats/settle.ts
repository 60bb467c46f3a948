/**
 * What the permit consumer does with a JetStream message once its handler has settled: core's
 * one rule for brokers (`settleMessage`), spelt the JetStream way. JetStream can redeliver after
 * a delay (`nak(ms)`), so a refusal downstream becomes a delayed redelivery and the permit is
 * freed at once; a plain failure waits `retryDelayMs` too, until its `maxDeliveries`-th delivery.
 *
 * @module
 */
import { settleMessage, type GiveUpReason, type MessageEnd } from '../core/retry/settle-message.js';

/** Why a message was terminated (never redelivered). */
export type TermReason = GiveUpReason;

/** What to do with a settled message. */
export type NatsSettlement =
  | { readonly action: 'ack' }
  /** Redeliver after `delayMs` (0: now). */
  | { readonly action: 'nak'; readonly delayMs: number }
  | { readonly action: 'term'; readonly reason: TermReason };

/**
 * How the handler ended: it succeeded, failed with `error`, or ran past its deadline
 * (`expired`: its ack wait, or the message's life).
 */
export type HandlerEnd = MessageEnd;

/** The facts the rule reads besides how the handler ended. */
export interface SettleFacts {
  /** This delivery's number (1 = first). */
  readonly deliveryCount: number;
  /** Ms left of the message's life (`maxAgeMs`), Infinity without one. */
  readonly lifeLeftMs: number;
  /** Delay for a failure that names none, in ms. */
  readonly retryDelayMs: number;
  /** Deliveries a failing message gets before it is terminated `failed`. */
  readonly maxDeliveries: number;
}

/**
 * The rule (`settleMessage`) with JetStream's facts: retry is `nak(delayMs)`, give up is `term`;
 * `elsewhere` is redelivered now on every delivery.
 */
export function settle(end: HandlerEnd, facts: SettleFacts): NatsSettlement {
  const s = settleMessage(end, {
    lifeLeftMs: facts.lifeLeftMs,
    lastDelivery: facts.deliveryCount >= facts.maxDeliveries,
    failureRetryMs: facts.retryDelayMs,
    refusalRetryMs: facts.retryDelayMs,
    elsewhereNow: true,
  });
  if (s.action === 'ack') return s;
  return s.action === 'retry'
    ? { action: 'nak', delayMs: s.afterMs }
    : { action: 'term', reason: s.reason };
}
