/**
 * What the permit consumer does with a JetStream message once its handler has settled: the
 * one documented rule, pure so it is tested without a server. JetStream can redeliver after a
 * delay (`nak(ms)`), so a refusal downstream becomes a delayed redelivery and the permit is
 * freed at once.
 *
 * @module
 */
import { classifyError } from '../core/retry/classify.js';

/** Why a message was terminated (never redelivered). */
export type TermReason = 'expired' | 'failed' | 'refused';

/** What to do with a settled message. */
export type NatsSettlement =
  | { readonly action: 'ack' }
  /** Redeliver after `delayMs` (0: now). */
  | { readonly action: 'nak'; readonly delayMs: number }
  | { readonly action: 'term'; readonly reason: TermReason };

/** How the handler ended: it succeeded, failed with `error`, or ran past its deadline. */
export type HandlerEnd =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: unknown; readonly expired: boolean };

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

/** `later` with its wait, `elsewhere`, or `never`, if the error is a refusal; else undefined. */
function refusal(error: unknown): { signal: string; retryAfterMs: number | undefined } | undefined {
  const c = classifyError(error);
  if (c !== undefined) return { signal: c.signal, retryAfterMs: c.retryAfterMs };
  // A limit the handler used refused (no signal, a wait): that is `later` too.
  const ms = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof ms === 'number' && ms >= 0 && ms < Infinity
    ? { signal: 'later', retryAfterMs: ms }
    : undefined;
}

/**
 * The rule. Success: ack. Ran past the message's life (`maxAgeMs`): term `expired`. Refused
 * downstream with `later`: nak with delay `retryAfterMs` (or `retryDelayMs`), unless the message
 * would be dead by then (term `expired`); `elsewhere`: nak now; `never`: term `refused`. Any
 * other failure, or a handler that outlived its ack wait: nak after `retryDelayMs`, until the
 * `maxDeliveries`-th delivery fails, which is terminated `failed` (a poison message cannot loop).
 */
export function settle(end: HandlerEnd, facts: SettleFacts): NatsSettlement {
  if (end.ok) return { action: 'ack' };
  if (facts.lifeLeftMs <= 0) return { action: 'term', reason: 'expired' };
  const r = end.expired ? undefined : refusal(end.error);
  if (r !== undefined) {
    if (r.signal === 'never') return { action: 'term', reason: 'refused' };
    if (r.signal === 'elsewhere') return { action: 'nak', delayMs: 0 };
    const delayMs = r.retryAfterMs ?? facts.retryDelayMs;
    return delayMs >= facts.lifeLeftMs
      ? { action: 'term', reason: 'expired' }
      : { action: 'nak', delayMs };
  }
  return facts.deliveryCount >= facts.maxDeliveries
    ? { action: 'term', reason: 'failed' }
    : { action: 'nak', delayMs: facts.retryDelayMs };
}
