import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { retryBudget, isRetryBudget } from './retry-budget.js';
import type { TokenBudget } from './token-budget.js';

describe('retryBudget, tokens policy (gRPC A6)', () => {
  it('defaults to 10 tokens, refunds 0.1 per success, and stops retrying at half', () => {
    const budget = retryBudget();
    expect(budget.policy).toBe('tokens');
    expect(budget.available).toBe(4); // failures to 9, 8, 7, 6 keep retrying; 5 stops
    const granted: boolean[] = [];
    for (let i = 0; i < 6; i++) {
      budget.recordFailure();
      granted.push(budget.tryRetry());
    }
    expect(granted).toEqual([true, true, true, true, false, false]);
    expect((budget as TokenBudget).tokens).toBe(4);
    // Ten successes earn back one token: 5 is still not above half.
    for (let i = 0; i < 10; i++) budget.recordSuccess();
    expect(budget.tryRetry()).toBe(false);
    for (let i = 0; i < 10; i++) budget.recordSuccess();
    expect(budget.tryRetry()).toBe(true);
    for (let i = 0; i < 1_000; i++) budget.recordSuccess();
    expect((budget as TokenBudget).tokens).toBe(10); // capped at maxTokens
  });

  it('keeps three decimals, as gRPC does, and never drifts', () => {
    const budget = retryBudget({ maxTokens: 3, tokenRatio: 0.5466 }) as TokenBudget;
    budget.recordFailure();
    budget.recordFailure();
    budget.recordSuccess();
    expect(budget.tokens).toBe(1.546);
    for (let i = 0; i < 1_000_000; i++) {
      budget.recordFailure();
      budget.recordSuccess();
      budget.recordSuccess();
    }
    expect(budget.tokens).toBe(3);
  });

  it('refuses out-of-range options by name', () => {
    expect(() => retryBudget({ maxTokens: 0 })).toThrow(/`maxTokens`/);
    expect(() => retryBudget({ maxTokens: 1001 })).toThrow(/`maxTokens`/);
    expect(() => retryBudget({ tokenRatio: 0 })).toThrow(/`tokenRatio`/);
    expect(() => retryBudget({ tokenRatio: 0.0004 })).toThrow(/`tokenRatio`/);
    expect(() => retryBudget({ tokenRatio: Number.NaN })).toThrow(/`tokenRatio`/);
    expect(() => retryBudget({ policy: 'bucket' as never })).toThrow(/`policy`/);
    expect(() => retryBudget([] as never)).toThrow(/retryBudget options/);
  });
});

describe('retryBudget, ratio policy (Finagle)', () => {
  it('allows the reserve plus 20 % of requests, and the reserve comes back after ttl', async () => {
    const clock = createVirtualClock();
    const budget = retryBudget({ policy: 'ratio', minRetriesPerSec: 1, ttlMs: 2_000, clock });
    expect(budget.available).toBe(2); // 1/s × 2 s
    for (let i = 0; i < 10; i++) budget.recordRequest();
    expect(budget.available).toBe(4);
    let granted = 0;
    while (budget.tryRetry()) granted++;
    expect(granted).toBe(4);
    await clock.advance(1_000);
    expect(budget.tryRetry()).toBe(false); // nothing aged out yet
    await clock.advance(1_000);
    expect(budget.available).toBe(2); // deposits and withdrawals both expired: the reserve is back
  });

  it('an empty budget (0 %, no floor) never retries', () => {
    const budget = retryBudget({
      policy: 'ratio',
      percentCanRetry: 0,
      minRetriesPerSec: 0,
      clock: createVirtualClock(),
    });
    for (let i = 0; i < 100; i++) budget.recordRequest();
    expect(budget.tryRetry()).toBe(false);
  });

  it('refuses out-of-range options by name', () => {
    const clock = createVirtualClock();
    expect(() => retryBudget({ policy: 'ratio', ttlMs: 999, clock })).toThrow(/`ttlMs`/);
    expect(() => retryBudget({ policy: 'ratio', ttlMs: 60_001, clock })).toThrow(/`ttlMs`/);
    expect(() => retryBudget({ policy: 'ratio', percentCanRetry: -0.1, clock })).toThrow(
      /`percentCanRetry`/,
    );
    expect(() => retryBudget({ policy: 'ratio', minRetriesPerSec: -1, clock })).toThrow(
      /`minRetriesPerSec`/,
    );
    expect(() => retryBudget({ policy: 'ratio', clock: {} as never })).toThrow(/`clock`/);
  });
});

describe('withdrawOnly', () => {
  it('shares the balance but records nothing', () => {
    const clock = createVirtualClock();
    const budget = retryBudget({ policy: 'ratio', minRetriesPerSec: 0, clock });
    const view = budget.withdrawOnly();
    expect(isRetryBudget(view)).toBe(true);
    expect(view.withdrawOnly()).toBe(view);
    for (let i = 0; i < 10; i++) view.recordRequest(); // ignored
    expect(view.tryRetry()).toBe(false);
    for (let i = 0; i < 5; i++) budget.recordRequest();
    expect(view.available).toBe(1);
    expect(view.tryRetry()).toBe(true);
    expect(budget.tryRetry()).toBe(false);

    const tokens = retryBudget({ maxTokens: 2 });
    const tokenView = tokens.withdrawOnly();
    tokenView.recordFailure(); // ignored
    expect(tokenView.tryRetry()).toBe(true);
    tokens.recordFailure();
    expect(tokenView.tryRetry()).toBe(false);
  });

  it('emits onExhausted on refusals, through the view too', () => {
    const budget = retryBudget({ maxTokens: 1 });
    const seen: string[] = [];
    using _ = budget.withdrawOnly().onExhausted((e) => seen.push(e.policy));
    budget.recordFailure();
    budget.tryRetry();
    expect(seen).toEqual(['tokens']);
  });
});
