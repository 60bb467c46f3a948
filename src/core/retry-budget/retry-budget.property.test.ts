import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { retryBudget, type RetryBudget } from './retry-budget.js';
import type { TokenBudget } from './token-budget.js';

/**
 * Feeds a sequence of attempt outcomes through a client that makes up to 3 attempts per request
 * and asks the budget before each retry, as `retry()` does. Returns what happened.
 */
function drive(
  budget: RetryBudget,
  outcomes: readonly boolean[],
  onStep?: (retried: boolean) => void,
): { requests: number; retries: number; successes: number } {
  let requests = 0;
  let retries = 0;
  let successes = 0;
  let attempt = 0;
  for (const ok of outcomes) {
    if (attempt === 0) {
      requests++;
      budget.recordRequest();
    }
    attempt++;
    if (ok) {
      successes++;
      budget.recordSuccess();
      attempt = 0;
      onStep?.(false);
      continue;
    }
    budget.recordFailure();
    const retry = attempt < 3 && budget.tryRetry();
    if (retry) retries++;
    else attempt = 0;
    onStep?.(retry);
  }
  return { requests, retries, successes };
}

describe('retry budget invariants', () => {
  it('tokens: retries ≤ maxTokens/2 + tokenRatio × successes, and no retry once tokens ≤ half', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }).map((m) => m / 1000),
        fc.integer({ min: 1, max: 2_000 }).map((r) => r / 1000),
        fc.array(fc.boolean(), { maxLength: 500 }),
        (maxTokens, tokenRatio, outcomes) => {
          const budget = retryBudget({ maxTokens, tokenRatio }) as TokenBudget;
          const { retries, successes } = drive(budget, outcomes, () => {
            // The A6 rule, checked after every step: a retry may go iff tokens > max/2.
            const above = budget.tokens > maxTokens / 2;
            expect(budget.tryRetry()).toBe(above);
            expect(budget.tokens).toBeGreaterThanOrEqual(0);
            expect(budget.tokens).toBeLessThanOrEqual(maxTokens);
          });
          expect(retries).toBeLessThanOrEqual(maxTokens / 2 + tokenRatio * successes + 1e-9);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('tokens: a callee that always fails gets at most maxTokens/2 retries, ever', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.nat({ max: 2_000 }), (maxTokens, n) => {
        const budget = retryBudget({ maxTokens });
        const { retries } = drive(budget, Array<boolean>(n).fill(false));
        expect(retries).toBeLessThanOrEqual(Math.ceil(maxTokens / 2));
      }),
    );
  });

  it('ratio: within one window, retries ≤ percentCanRetry × requests + minRetriesPerSec × ttl', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }).map((p) => p / 1000),
        fc.integer({ min: 0, max: 20 }),
        fc.array(fc.record({ ok: fc.boolean(), dt: fc.integer({ min: 0, max: 50 }) }), {
          maxLength: 400,
        }),
        (percentCanRetry, minRetriesPerSec, steps) => {
          const clock = createVirtualClock();
          const ttlMs = 10_000;
          const budget = retryBudget({ policy: 'ratio', percentCanRetry, minRetriesPerSec, clock });
          // Keep the whole run inside 9 slices (9 s) so nothing ages out.
          let elapsed = 0;
          const outcomes: boolean[] = [];
          const times: number[] = [];
          for (const { ok, dt } of steps) {
            if (elapsed + dt >= 9_000) break;
            elapsed += dt;
            outcomes.push(ok);
            times.push(dt);
          }
          let i = 0;
          const result = drive(budget, outcomes, () => {
            clock.advanceSync(times[++i] ?? 0);
          });
          expect(result.retries).toBeLessThanOrEqual(
            percentCanRetry * result.requests + (minRetriesPerSec * ttlMs) / 1000 + 1e-9,
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ratio: over any run, retries ≤ percentCanRetry × requests + the floor for each ttl elapsed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }).map((p) => p / 1000),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 1, max: 6 }).map((s) => s * 1_000),
        fc.array(fc.record({ ok: fc.boolean(), dt: fc.integer({ min: 0, max: 700 }) }), {
          maxLength: 400,
        }),
        (percentCanRetry, minRetriesPerSec, ttlMs, steps) => {
          const clock = createVirtualClock();
          const budget = retryBudget({
            policy: 'ratio',
            percentCanRetry,
            minRetriesPerSec,
            ttlMs,
            clock,
          });
          let i = 0;
          const result = drive(
            budget,
            steps.map((s) => s.ok),
            () => clock.advanceSync(steps[++i]?.dt ?? 0),
          );
          const windows = Math.ceil(clock.now() / ttlMs) + 1;
          const floor = (minRetriesPerSec * ttlMs) / 1000;
          expect(result.retries).toBeLessThanOrEqual(
            percentCanRetry * result.requests + floor * windows + 1e-9,
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
