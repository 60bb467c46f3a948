/**
 * The `tokens` retry budget, as gRPC A6 `retryThrottling` specifies it: the bucket starts full
 * at `maxTokens`; a counted failure takes 1 token, a success gives back `tokenRatio`; a retry
 * may go only while the tokens are above half of `maxTokens`. Kept in thousandths as integers,
 * as gRPC does, so no rounding drift creeps in over millions of calls.
 *
 * @module
 */
import { SpillwayConfigError } from '../errors/config-error.js';
import { Emitter } from '../events/emitter.js';
import { numberInRange } from '../internal/validate.js';
import type { RetryBudget, RetryBudgetExhaustedEvent } from './contract.js';
import { WithdrawOnlyBudget } from './withdraw-only.js';

export const tokenDefaults = { maxTokens: 10, tokenRatio: 0.1 } as const;

const scale = 1000;

/** Thousandths, truncated (gRPC keeps three decimals: 0.5466 → 0.546). */
function milli(value: number): number {
  return Math.floor(value * scale + 1e-9);
}

export class TokenBudget implements RetryBudget {
  readonly policy = 'tokens';
  readonly #max: number;
  readonly #ratio: number;
  readonly #threshold: number;
  #tokens: number;
  readonly #exhausted = new Emitter<RetryBudgetExhaustedEvent>();
  readonly onExhausted = this.#exhausted.event;

  constructor(maxTokens: unknown, tokenRatio: unknown) {
    const max = milli(numberInRange('maxTokens', maxTokens, [0.001, 1000]));
    const ratio = typeof tokenRatio === 'number' ? milli(tokenRatio) : Number.NaN;
    if (!(ratio >= 1 && ratio <= 1000 * scale)) {
      throw new SpillwayConfigError('tokenRatio', 'a number from 0.001 to 1000', tokenRatio);
    }
    this.#max = max;
    this.#ratio = ratio;
    this.#threshold = max / 2;
    this.#tokens = max;
  }

  /** Tokens now (fractional), for tests and metrics. */
  get tokens(): number {
    return this.#tokens / scale;
  }

  get available(): number {
    // The largest n with tokens − n > threshold: each retry follows one more failure.
    const n = Math.ceil((this.#tokens - this.#threshold) / scale) - 1;
    return n > 0 ? n : 0;
  }

  recordRequest(): void {}

  recordSuccess(): void {
    const t = this.#tokens + this.#ratio;
    this.#tokens = t < this.#max ? t : this.#max;
  }

  recordFailure(): void {
    const t = this.#tokens - scale;
    this.#tokens = t > 0 ? t : 0;
  }

  tryRetry(): boolean {
    if (this.#tokens > this.#threshold) return true;
    if (this.#exhausted.size > 0) this.#exhausted.emit({ policy: 'tokens' });
    return false;
  }

  withdrawOnly(): RetryBudget {
    return new WithdrawOnlyBudget(this);
  }
}
