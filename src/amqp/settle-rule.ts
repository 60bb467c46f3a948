/**
 * What a consumer does with a message once its handler has settled: the one documented rule,
 * kept pure so it is tested without a broker. RabbitMQ has no delayed `nack`, so a message
 * refused downstream is *held* (unacknowledged, its permit kept) for `retryAfterMs` and then
 * requeued; holding it is the slow-down, because prefetch equals permits.
 *
 * @module
 */
import type { RetrySignal } from '../core/errors/overloaded-error.js';
import { classifyError } from '../core/retry/classify.js';
import { isSpillwayError } from '../core/errors/spillway-error.js';

/** Why a message was dead-lettered (`nack` without requeue). */
export type DeadLetterReason = 'expired' | 'failed' | 'refused';

/** What to do with a settled message. */
export type Settlement =
  | { readonly action: 'ack' }
  /** `nack` with requeue after holding the message (and its permit) for `afterMs`. */
  | { readonly action: 'requeue'; readonly afterMs: number }
  | { readonly action: 'dead-letter'; readonly reason: DeadLetterReason };

/** How the handler ended. */
export type HandlerOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: unknown; readonly expired: boolean };

/** A refusal from downstream, read off a Spillway error: what to do and when. */
export interface Refusal {
  readonly signal: RetrySignal;
  readonly retryAfterMs: number | undefined;
}

/**
 * The refusal an error stands for: what core's `classifyError` reads off it (a `signal` of
 * `later`, `elsewhere` or `never`, an HTTP 429 or 503, a network error before sending), or a
 * local limit's refusal carrying a `retryAfterMs` (`later`). Anything else is a plain failure
 * (undefined). Works across two installed copies of Spillway.
 */
export function refusalOf(error: unknown): Refusal | undefined {
  const c = classifyError(error);
  if (c !== undefined) return { signal: c.signal, retryAfterMs: c.retryAfterMs };
  const ms = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return isSpillwayError(error) && typeof ms === 'number' && ms >= 0 && ms < Infinity
    ? { signal: 'later', retryAfterMs: ms }
    : undefined;
}

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
 * The rule. Success: ack. Past its deadline (the signal aborted): dead-letter `expired`.
 * Refused downstream with `later`: requeue after `retryAfterMs`, unless the deadline comes
 * first (dead-letter `expired`: the work would be dead by then). `elsewhere`: requeue now the
 * first time, then as `later`. `never`: dead-letter `refused`. Any other failure: requeue once; a redelivered message that
 * fails again is dead-lettered `failed` (so a poison message cannot loop).
 */
export function settle(outcome: HandlerOutcome, facts: SettleFacts): Settlement {
  if (outcome.ok) return { action: 'ack' };
  if (outcome.expired || facts.remainingMs <= 0)
    return { action: 'dead-letter', reason: 'expired' };
  const refusal = refusalOf(outcome.error);
  if (refusal !== undefined) {
    if (refusal.signal === 'never') return { action: 'dead-letter', reason: 'refused' };
    // Another consumer may fare better, once; after that, wait as for `later` (no hot loop).
    if (refusal.signal === 'elsewhere' && !facts.redelivered)
      return { action: 'requeue', afterMs: 0 };
    const afterMs = refusal.retryAfterMs ?? facts.defaultRetryAfterMs;
    return afterMs >= facts.remainingMs
      ? { action: 'dead-letter', reason: 'expired' }
      : { action: 'requeue', afterMs };
  }
  return facts.redelivered
    ? { action: 'dead-letter', reason: 'failed' }
    : { action: 'requeue', afterMs: 0 };
}
