/**
 * What a broker consumer does with a message once its handler has settled, whatever the
 * broker: ack it, deliver it again after a wait, or give it up with a reason. One rule, pure and
 * transport-free; each broker's consumer says how its wire spells the answer (NATS: `ack`,
 * `nak(ms)`, `term`; RabbitMQ: `ack`, a hold then `nack` with requeue, `nack` without) and
 * supplies the facts it has (how many deliveries, how long a message may live).
 *
 * @module
 */
import type { RetrySignal } from '../errors/overloaded-error.js';
import { isSpillwayError } from '../errors/spillway-error.js';
import { classifyError } from './classify.js';

/** How the handler ended: it succeeded, or failed with `error`. */
export type MessageEnd =
  | { readonly ok: true }
  /**
   * `expired`: the handler ran out of time (its signal aborted), so what it threw says nothing
   * about downstream: a plain failure, unless the message's life is over too.
   */
  | { readonly ok: false; readonly error: unknown; readonly expired: boolean };

/** Why a message is given up (never delivered again by this consumer). */
export type GiveUpReason = 'expired' | 'failed' | 'refused';

/** What to do with a settled message. */
export type MessageSettlement =
  | { readonly action: 'ack' }
  /** Deliver it again after `afterMs` (0: now). */
  | { readonly action: 'retry'; readonly afterMs: number }
  | { readonly action: 'give-up'; readonly reason: GiveUpReason };

/** A refusal from downstream, read off a failure: what to do and when. */
export interface MessageRefusal {
  readonly signal: RetrySignal;
  readonly retryAfterMs: number | undefined;
}

/**
 * The refusal a handler's error stands for: what `classifyError` reads off it (a `signal` of
 * `later`, `elsewhere` or `never`, an HTTP 429 or 503, a network error before sending), or a
 * Spillway limit's refusal carrying a `retryAfterMs` (`later`). Anything else is a plain
 * failure (undefined). Works across two installed copies of Spillway.
 */
export function messageRefusalOf(error: unknown): MessageRefusal | undefined {
  const c = classifyError(error);
  if (c !== undefined) return { signal: c.signal, retryAfterMs: c.retryAfterMs };
  const ms = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return isSpillwayError(error) && typeof ms === 'number' && ms >= 0 && ms < Infinity
    ? { signal: 'later', retryAfterMs: ms }
    : undefined;
}

/** The facts the rule reads besides how the handler ended, as the broker knows them. */
export interface MessageFacts {
  /** Ms left of the message's life (≤ 0: past it; Infinity without one). */
  readonly lifeLeftMs: number;
  /** A plain failure on this delivery gives the message up (`failed`): it was its last. */
  readonly lastDelivery: boolean;
  /** Wait before a plain failure is delivered again, in ms. */
  readonly failureRetryMs: number;
  /** Wait for a `later` refusal that names no `retryAfterMs`, in ms. */
  readonly refusalRetryMs: number;
  /** An `elsewhere` refusal is delivered again now (another consumer may fare better); false: it waits as `later`. */
  readonly elsewhereNow: boolean;
}

/**
 * The rule. Success: ack. Past the message's life: give up `expired`. Refused downstream with
 * `later`: retry after its `retryAfterMs` (or `refusalRetryMs`), unless the message would be
 * dead by then (give up `expired`); `elsewhere`: retry now (if `elsewhereNow`, else as `later`);
 * `never`: give up `refused`. Any other failure, or a handler that ran out of time: retry after
 * `failureRetryMs`, unless it was the last delivery (give up `failed`, so a poison message
 * cannot loop).
 */
export function settleMessage(end: MessageEnd, facts: MessageFacts): MessageSettlement {
  if (end.ok) return { action: 'ack' };
  if (facts.lifeLeftMs <= 0) return { action: 'give-up', reason: 'expired' };
  const refusal = end.expired ? undefined : messageRefusalOf(end.error);
  if (refusal !== undefined) {
    if (refusal.signal === 'never') return { action: 'give-up', reason: 'refused' };
    if (refusal.signal === 'elsewhere' && facts.elsewhereNow)
      return { action: 'retry', afterMs: 0 };
    const afterMs = refusal.retryAfterMs ?? facts.refusalRetryMs;
    return afterMs >= facts.lifeLeftMs
      ? { action: 'give-up', reason: 'expired' }
      : { action: 'retry', afterMs };
  }
  return facts.lastDelivery
    ? { action: 'give-up', reason: 'failed' }
    : { action: 'retry', afterMs: facts.failureRetryMs };
}
