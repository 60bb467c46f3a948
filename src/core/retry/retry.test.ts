import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { backoff } from '../backoff/backoff.js';
import { DependencyOverloadedError, type RetrySignal } from '../errors/overloaded-error.js';
import { QueueFullError } from '../errors/rejected-error.js';
import { RetryBudgetExhaustedError } from '../errors/retry-budget-error.js';
import { DependencyUnreachableError } from '../errors/unreachable-error.js';
import { DependencyTimeoutError } from '../errors/dependency-timeout-error.js';
import { budgetCarriedBy, carryBudget } from '../retry-budget/carried-budget.js';
import { retryBudget } from '../retry-budget/retry-budget.js';
import { retry, type RetryContext } from './retry.js';

function refusal(signal: RetrySignal, retryAfterMs?: number): DependencyOverloadedError {
  return new DependencyOverloadedError('refused', {
    signal,
    retryAfterMs,
    dependency: 'users',
    status: 503,
  });
}

/** A callee answering with the given failures, then `ok`. Records when each attempt ran. */
function callee(clock: { now(): number }, failures: unknown[]) {
  const calls: number[] = [];
  const fn = (context: RetryContext): Promise<string> => {
    calls.push(clock.now());
    expect(context.attempt).toBe(calls.length);
    const failure = failures[calls.length - 1];
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- callees fail with anything
    return failure === undefined ? Promise.resolve('ok') : Promise.reject(failure);
  };
  return { calls, fn };
}

const noJitter = backoff({ random: () => 0 });

describe('retry', () => {
  it('returns the first success and records it in the budget', async () => {
    const budget = retryBudget({ maxTokens: 2 });
    budget.recordFailure(); // 1 token: at half
    const clock = createVirtualClock();
    expect(await retry(() => 42, { budget, clock })).toBe(42);
    for (let i = 0; i < 9; i++) await retry(() => 'x', { budget, clock });
    expect(budget.tryRetry()).toBe(true); // ten successes earned back 1 token
    expect(await retry(() => Promise.resolve('no options'))).toBe('no options');
  });

  it('retries idempotent work on later / elsewhere, then gives up with attempts and the cause', async () => {
    const clock = createVirtualClock();
    const failures = [refusal('elsewhere'), refusal('later'), refusal('later', 20)];
    const { calls, fn } = callee(clock, failures);
    const run = retry(fn, { idempotent: true, clock, backoff: noJitter });
    const settled = run.catch((e: unknown) => e);
    await clock.runAll();
    const error = (await settled) as DependencyOverloadedError;
    expect(calls).toHaveLength(3);
    expect(error).toBeInstanceOf(DependencyOverloadedError);
    expect(error.attempts).toBe(3);
    expect(error.signal).toBe('later');
    expect(error.retryAfterMs).toBe(20);
    expect(error.dependency).toBe('users');
    expect(error.status).toBe(503);
    expect(error.cause).toBe(failures[2]);
  });

  it('succeeds on a later attempt', async () => {
    const clock = createVirtualClock();
    const { calls, fn } = callee(clock, [refusal('elsewhere')]);
    const run = retry(fn, { idempotent: true, clock });
    await clock.runAll();
    expect(await run).toBe('ok');
    expect(calls).toHaveLength(2);
  });

  it('does not retry work that is not idempotent, and throws its failure unchanged', async () => {
    const clock = createVirtualClock();
    const failure = refusal('later', 10);
    const { calls, fn } = callee(clock, [failure]);
    await expect(retry(fn, { clock })).rejects.toBe(failure);
    expect(calls).toHaveLength(1);
  });

  it('retries a request that never left, even when not idempotent', async () => {
    const clock = createVirtualClock();
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    const unsent = new DependencyUnreachableError({ sent: false, cause: refused });
    const { calls, fn } = callee(clock, [refused, unsent]);
    const run = retry(fn, { clock });
    await clock.runAll();
    expect(await run).toBe('ok');
    expect(calls).toHaveLength(3);
    // A network error after the request may have been sent is not retried.
    const sent = new DependencyUnreachableError({ sent: true });
    const again = callee(clock, [sent]);
    await expect(retry(again.fn, { clock, idempotent: true })).rejects.toBe(sent);
    const timeout = new DependencyTimeoutError({ timeoutMs: 5 });
    const slow = callee(clock, [timeout]);
    await expect(retry(slow.fn, { clock, idempotent: true })).rejects.toBe(timeout);
  });

  it('never retries `never`, nor an error from a layer below that already retried', async () => {
    const clock = createVirtualClock();
    const never = refusal('never');
    const a = callee(clock, [never]);
    await expect(retry(a.fn, { clock, idempotent: true })).rejects.toBe(never);
    expect(a.calls).toHaveLength(1);
    const retriedBelow = new DependencyOverloadedError('x', { signal: 'later', attempts: 3 });
    const b = callee(clock, [retriedBelow]);
    await expect(retry(b.fn, { clock, idempotent: true })).rejects.toBe(retriedBelow);
    expect(b.calls).toHaveLength(1);
  });

  it('passes other failures up untouched and does not count them', async () => {
    const clock = createVirtualClock();
    const budget = retryBudget({ maxTokens: 1 });
    const bug = new RangeError('a bug');
    const local = new QueueFullError();
    for (const failure of [bug, local, 'a string', null]) {
      const { calls, fn } = callee(clock, [failure]);
      await expect(retry(fn, { clock, idempotent: true, budget })).rejects.toBe(failure);
      expect(calls).toHaveLength(1);
    }
    expect(budget.tryRetry()).toBe(true); // nothing was counted as a failure
  });

  it('reads the status of HTTP client errors (429 later, 503 elsewhere)', async () => {
    const clock = createVirtualClock();
    const tooMany = Object.assign(new Error('HTTP 429'), { response: { status: 429 } });
    const busy = Object.assign(new Error('HTTP 503'), { statusCode: 503 });
    const { calls, fn } = callee(clock, [tooMany, busy]);
    const run = retry(fn, { clock, idempotent: true });
    await clock.runAll();
    expect(await run).toBe('ok');
    expect(calls).toHaveLength(3);
  });

  it('stops with RetryBudgetExhaustedError (signal never) when the budget says no', async () => {
    const clock = createVirtualClock();
    const budget = retryBudget({ maxTokens: 2 }); // one failure brings it to half
    const { calls, fn } = callee(clock, [refusal('elsewhere'), refusal('elsewhere')]);
    const error = (await retry(fn, { clock, idempotent: true, budget }).catch(
      (e: unknown) => e,
    )) as RetryBudgetExhaustedError;
    expect(calls).toHaveLength(1);
    expect(error).toBeInstanceOf(RetryBudgetExhaustedError);
    expect(error.signal).toBe('never');
    expect(error.attempts).toBe(1);
    expect(error.dependency).toBe('users');
    expect(error.code).toBe('SPILLWAY_E_RETRY_BUDGET');
  });

  it('without a budget of its own, spends the one the failure carries (and only withdraws)', async () => {
    const clock = createVirtualClock();
    const dependencyBudget = retryBudget({ maxTokens: 2 }); // one failure brings it to half
    const marked = (): DependencyOverloadedError => {
      const e = refusal('elsewhere');
      carryBudget(e, dependencyBudget);
      return e;
    };
    // Tokens 2 → 1 (a failure the dependency itself counted): at half, no retry is allowed.
    dependencyBudget.recordFailure();
    const { calls, fn } = callee(clock, [marked(), marked()]);
    const error = await retry(fn, { clock, idempotent: true }).catch((e: unknown) => e);
    expect(calls).toHaveLength(1);
    expect(error).toBeInstanceOf(RetryBudgetExhaustedError);
    // With tokens to spare the loop retries, and counts nothing itself: the dependency does.
    const roomy = retryBudget();
    const plain = refusal('elsewhere');
    carryBudget(plain, roomy);
    const again = callee(clock, [plain]);
    const done = retry(again.fn, { clock, idempotent: true, backoff: noJitter });
    await clock.advance(1_000);
    expect(await done).toBe('ok');
    expect(again.calls).toHaveLength(2);
    // A budget given to the loop wins over the carried one.
    const own = retryBudget();
    const third = callee(clock, [marked()]);
    const mine = retry(third.fn, { clock, idempotent: true, budget: own, backoff: noJitter });
    await clock.advance(1_000);
    expect(await mine).toBe('ok');
    // The mark is invisible to logs and JSON, and only a real budget is read back.
    expect(Object.keys(plain)).not.toContain('Symbol(spillway.retryBudget)');
    expect(JSON.stringify(plain)).not.toContain('retryBudget');
    expect(budgetCarriedBy(plain)).toBe(roomy);
    expect(budgetCarriedBy(new Error('x'))).toBeUndefined();
    expect(budgetCarriedBy('text')).toBeUndefined();
    carryBudget(Object.freeze(new Error('frozen')), roomy); // left alone, no throw
  });

  it('waits at least the Retry-After the callee gave', async () => {
    const clock = createVirtualClock();
    const { calls, fn } = callee(clock, [refusal('later', 1_000), refusal('later', 250)]);
    const run = retry(fn, { clock, idempotent: true });
    await clock.runAll();
    expect(await run).toBe('ok');
    expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(1_000);
    expect(calls[1]! - calls[0]!).toBeLessThan(1_100); // + jitter below base (100 ms)
    expect(calls[2]! - calls[1]!).toBeGreaterThanOrEqual(250);
  });

  it('fails now, with signal never, instead of waiting past the deadline', async () => {
    const clock = createVirtualClock({ start: 1_000 });
    const { calls, fn } = callee(clock, [refusal('later', 2_000)]);
    const error = (await retry(fn, {
      clock,
      idempotent: true,
      deadline: { expiresAt: 2_500 },
    }).catch((e: unknown) => e)) as DependencyOverloadedError;
    expect(calls).toHaveLength(1);
    expect(clock.now()).toBe(1_000); // no time was spent waiting
    expect(error.signal).toBe('never');
    expect(error.attempts).toBe(1);
    expect(error.message).toMatch(/would pass the deadline/);
    // An absolute number works as well.
    const b = callee(clock, [refusal('later', 600)]);
    await expect(retry(b.fn, { clock, idempotent: true, deadline: 1_500 })).rejects.toMatchObject({
      signal: 'never',
    });
  });

  it('passes a Retry-After longer than maxRetryAfterMs up, unchanged, without waiting', async () => {
    const clock = createVirtualClock();
    const failure = refusal('later', 86_400_000);
    const { calls, fn } = callee(clock, [failure]);
    await expect(retry(fn, { clock, idempotent: true })).rejects.toBe(failure);
    expect(calls).toHaveLength(1);
  });

  it('an abort during the wait ends the loop at once and leaves nothing behind', async () => {
    const clock = createVirtualClock();
    const controller = new AbortController();
    const { calls, fn } = callee(clock, [refusal('later', 5_000)]);
    const run = retry(fn, { clock, idempotent: true, signal: controller.signal });
    const settled = run.catch((e: unknown) => e);
    await clock.advance(1_000);
    expect(clock.pendingTimers).toBe(1);
    controller.abort(new Error('caller left'));
    expect(((await settled) as Error).message).toBe('caller left');
    expect(calls).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await expect(retry(fn, { signal: controller.signal })).rejects.toThrow('caller left');
  });

  it('a callee failing forever costs at most maxAttempts per call and the budget overall', async () => {
    const clock = createVirtualClock();
    const budget = retryBudget(); // 10 tokens: retries stop at 5
    let attempts = 0;
    const fn = (): Promise<never> => {
      attempts++;
      return Promise.reject(refusal('elsewhere'));
    };
    for (let i = 0; i < 1_000; i++) {
      const run = retry(fn, { clock, idempotent: true, budget, maxAttempts: 5 }).catch(() => {});
      await clock.runAll();
      await run;
    }
    expect(attempts).toBeLessThanOrEqual(1_000 + 5);
  });

  it('reports each retry to onRetry', async () => {
    const clock = createVirtualClock();
    const events: unknown[] = [];
    const { fn } = callee(clock, [refusal('elsewhere')]);
    const run = retry(fn, {
      clock,
      idempotent: true,
      backoff: { random: () => 0.5 },
      onRetry: (e) => events.push({ attempt: e.attempt, delayMs: e.delayMs, signal: e.signal }),
    });
    await clock.runAll();
    await run;
    expect(events).toEqual([{ attempt: 2, delayMs: 50, signal: 'elsewhere' }]);
  });

  it('refuses bad options by name', async () => {
    for (const maxAttempts of [0, 6, 2.5, Number.NaN]) {
      await expect(retry(() => 1, { maxAttempts })).rejects.toThrow(/`maxAttempts`/);
    }
    await expect(retry(() => 1, { budget: {} as never })).rejects.toThrow(/`budget`/);
    await expect(retry(() => 1, { signal: 'x' as never })).rejects.toThrow(/`signal`/);
    await expect(retry(() => 1, { idempotent: 'yes' as never })).rejects.toThrow(/`idempotent`/);
    await expect(retry(() => 1, { deadline: Number.NaN })).rejects.toThrow(/`deadline`/);
    await expect(retry(() => 1, { deadline: {} as never })).rejects.toThrow(/`deadline`/);
    await expect(retry(() => 1, { classify: 1 as never })).rejects.toThrow(/`classify`/);
    await expect(retry(() => 1, { backoff: 5 as never })).rejects.toThrow(/`backoff`/);
    await expect(retry(5 as never)).rejects.toThrow(/`fn`/);
  });
});
