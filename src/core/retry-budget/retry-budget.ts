/**
 * A retry budget: the shared allowance that keeps retries a small fraction of the traffic to a
 * dependency, however many layers retry. One interface, two policies: `tokens` (gRPC A6 retry
 * throttling) and `ratio` (Finagle's sliding-window RetryBudget). Every retry layer calling the
 * same dependency draws from one budget; a layer above one that already records outcomes uses
 * {@link RetryBudget.withdrawOnly} so nothing is counted twice.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { clockLike, oneOf, optionsObject } from '../internal/validate.js';
import { RatioBudget, ratioDefaults } from './ratio-budget.js';
import { TokenBudget, tokenDefaults } from './token-budget.js';
import type { RetryBudget } from './contract.js';

export type { RetryBudget, RetryBudgetExhaustedEvent, RetryBudgetPolicy } from './contract.js';

/** Options of the `tokens` policy (gRPC A6 `retryThrottling`). */
export interface TokenRetryBudgetOptions {
  readonly policy?: 'tokens';
  /**
   * Size of the bucket, which starts full; retries stop while the tokens are at or below half
   * of it. From 0.001 to 1000 (three decimals kept). @default 10
   */
  readonly maxTokens?: number;
  /**
   * Tokens a success gives back; a counted failure costs 1. Steady retrying is possible only
   * while failures stay below `tokenRatio` × successes. Three decimals kept. @default 0.1
   */
  readonly tokenRatio?: number;
}

/** Options of the `ratio` policy (Finagle `RetryBudget`). */
export interface RatioRetryBudgetOptions {
  readonly policy: 'ratio';
  /** Retries allowed per request within the window (0.2 = 20 %), from 0 to 1000. @default 0.2 */
  readonly percentCanRetry?: number;
  /** A floor of retries per second, so a quiet client can still retry. @default 10 */
  readonly minRetriesPerSec?: number;
  /** How long deposits and withdrawals count, from 1,000 to 60,000 ms (10 slices). @default 10_000 */
  readonly ttlMs?: number;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** Options of {@link retryBudget}: either policy; `tokens` when `policy` is left out. */
export type RetryBudgetOptions = TokenRetryBudgetOptions | RatioRetryBudgetOptions;

/** Either policy's options, seen before the policy is known. */
interface AnyBudgetOptions {
  readonly policy?: unknown;
  readonly maxTokens?: unknown;
  readonly tokenRatio?: unknown;
  readonly percentCanRetry?: unknown;
  readonly minRetriesPerSec?: unknown;
  readonly ttlMs?: unknown;
  readonly clock?: Clock;
}

/**
 * Creates a retry budget. Pass the same budget to every retry layer that calls one dependency.
 *
 * @example
 * const budget = retryBudget(); // gRPC A6: 10 tokens, 0.1 per success, stop at half
 * const finagle = retryBudget({ policy: 'ratio' }); // 20 % of requests + 10/s over 10 s
 * await retry(() => callUsers(), { budget, idempotent: true });
 */
export function retryBudget(options?: RetryBudgetOptions): RetryBudget {
  const o: AnyBudgetOptions = optionsObject('retryBudget options', options);
  const policy = oneOf('policy', o.policy ?? 'tokens', ['tokens', 'ratio']);
  if (policy === 'tokens') {
    return new TokenBudget(
      o.maxTokens ?? tokenDefaults.maxTokens,
      o.tokenRatio ?? tokenDefaults.tokenRatio,
    );
  }
  return new RatioBudget({
    percentCanRetry: o.percentCanRetry ?? ratioDefaults.percentCanRetry,
    minRetriesPerSec: o.minRetriesPerSec ?? ratioDefaults.minRetriesPerSec,
    ttlMs: o.ttlMs ?? ratioDefaults.ttlMs,
    clock: clockLike('clock', o.clock ?? systemClock),
  });
}

/** True for anything that implements {@link RetryBudget} (used to validate options). */
export function isRetryBudget(value: unknown): value is RetryBudget {
  const v = value as Partial<RetryBudget> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.tryRetry === 'function' &&
    typeof v.recordRequest === 'function' &&
    typeof v.recordSuccess === 'function' &&
    typeof v.recordFailure === 'function'
  );
}
