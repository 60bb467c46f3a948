/**
 * The `ratio` retry budget, after Finagle's RetryBudget: each request deposits
 * `percentCanRetry` of a retry, each retry withdraws one, and a reserve of
 * `minRetriesPerSec × ttl` lets a quiet client retry at all. Deposits and withdrawals both
 * expire after `ttlMs` (a window of 10 slices), so within any window retries stay within
 * `percentCanRetry` × requests + the reserve, and the reserve comes back as old retries age out.
 * Amounts are kept in thousandths of a retry, as integers.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { Emitter } from '../events/emitter.js';
import { nonNegativeNumber, numberInRange } from '../internal/validate.js';
import { SlicedWindow } from '../internal/sliced-window.js';
import type { RetryBudget, RetryBudgetExhaustedEvent } from './contract.js';
import { WithdrawOnlyBudget } from './withdraw-only.js';

export const ratioDefaults = { percentCanRetry: 0.2, minRetriesPerSec: 10, ttlMs: 10_000 } as const;

const scale = 1000;
const slices = 10;

export class RatioBudget implements RetryBudget {
  readonly policy = 'ratio';
  readonly #clock: Clock;
  readonly #window: SlicedWindow;
  readonly #deposit: number;
  readonly #reserve: number;
  readonly #exhausted = new Emitter<RetryBudgetExhaustedEvent>();
  readonly onExhausted = this.#exhausted.event;

  constructor(options: {
    readonly percentCanRetry: unknown;
    readonly minRetriesPerSec: unknown;
    readonly ttlMs: unknown;
    readonly clock: Clock;
  }) {
    const percent = numberInRange('percentCanRetry', options.percentCanRetry, [0, 1000]);
    const perSec = nonNegativeNumber('minRetriesPerSec', options.minRetriesPerSec);
    const ttlMs = numberInRange('ttlMs', options.ttlMs, [1_000, 60_000]);
    this.#clock = options.clock;
    this.#deposit = Math.round(percent * scale);
    this.#reserve = Math.round(perSec * ttlMs); // perSec × (ttlMs / 1000) retries, in thousandths
    this.#window = new SlicedWindow({
      sliceMs: ttlMs / slices,
      slices,
      counters: 1,
      now: options.clock.now(),
    });
  }

  get available(): number {
    const balance = this.#window.sum(0, this.#clock.now()) + this.#reserve;
    return balance > 0 ? Math.floor(balance / scale) : 0;
  }

  recordRequest(): void {
    if (this.#deposit > 0) this.#window.add(0, this.#deposit, this.#clock.now());
  }

  recordSuccess(): void {}
  recordFailure(): void {}

  tryRetry(): boolean {
    const now = this.#clock.now();
    if (this.#window.sum(0, now) + this.#reserve >= scale) {
      this.#window.add(0, -scale, now);
      return true;
    }
    if (this.#exhausted.size > 0) this.#exhausted.emit({ policy: 'ratio' });
    return false;
  }

  withdrawOnly(): RetryBudget {
    return new WithdrawOnlyBudget(this);
  }
}
