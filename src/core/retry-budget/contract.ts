/**
 * What every retry budget is, whichever its policy: the small contract the policies implement
 * and the retry loop, the client and the withdraw-only view rely on. Kept apart from the
 * factory so the policies depend on it, not on the factory that builds them.
 *
 * @module
 */
import type { Event } from '../events/emitter.js';

/** `tokens`: gRPC A6 token bucket. `ratio`: Finagle's share of recent requests plus a floor. */
export type RetryBudgetPolicy = 'tokens' | 'ratio';

/** Emitted when the budget refuses a retry. */
export interface RetryBudgetExhaustedEvent {
  readonly policy: RetryBudgetPolicy;
}

/** A retry budget shared by every retry layer calling one dependency (or several, by choice). */
export interface RetryBudget {
  readonly policy: RetryBudgetPolicy;
  /** A new request (its first attempt) starts. `ratio`: deposits a share of a retry. */
  recordRequest(): void;
  /** An attempt succeeded. `tokens`: refunds `tokenRatio`. */
  recordSuccess(): void;
  /** An attempt failed in a way that counts (a refusal, a timeout, a network error). `tokens`: costs 1. */
  recordFailure(): void;
  /**
   * May one more retry go now? `ratio` withdraws it when the answer is yes; `tokens` only
   * checks (the failure that prompted the retry already paid). Never blocks.
   */
  tryRetry(): boolean;
  /** Retries the budget would allow now if each of them failed. */
  readonly available: number;
  /**
   * A view on the same balance that only asks `tryRetry`; its `record*` methods do nothing.
   * Hand it to a retry layer above one that already records every attempt (Finagle's
   * withdraw-only budget), so no outcome is counted twice.
   */
  withdrawOnly(): RetryBudget;
  /** Fires each time a retry is refused. */
  readonly onExhausted: Event<RetryBudgetExhaustedEvent>;
}
