/**
 * The withdraw-only view of a retry budget (Finagle's WithdrawOnlyRetryBudget): a retry layer
 * above one that already records every attempt asks the same balance for retries without
 * counting any outcome a second time.
 *
 * @module
 */
import type { Event } from '../events/emitter.js';
import type { RetryBudget, RetryBudgetExhaustedEvent, RetryBudgetPolicy } from './contract.js';

/** The withdraw-only view: shares the balance, records nothing. */
export class WithdrawOnlyBudget implements RetryBudget {
  readonly #inner: RetryBudget;

  constructor(inner: RetryBudget) {
    this.#inner = inner;
  }

  get policy(): RetryBudgetPolicy {
    return this.#inner.policy;
  }

  get available(): number {
    return this.#inner.available;
  }

  get onExhausted(): Event<RetryBudgetExhaustedEvent> {
    return this.#inner.onExhausted;
  }

  recordRequest(): void {}
  recordSuccess(): void {}
  recordFailure(): void {}

  tryRetry(): boolean {
    return this.#inner.tryRetry();
  }

  withdrawOnly(): RetryBudget {
    return this;
  }
}
