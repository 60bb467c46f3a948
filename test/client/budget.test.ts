// Budgets across layers and dependencies, against real servers: each dependency has its own
// budget, so a failing one never spends a healthy one's retries; an application's own retry()
// around a dependency draws from that dependency's tokens instead of multiplying its attempts.
import { afterEach, describe, expect, it } from 'vitest';
import { dependency } from '../../src/client/index.js';
import { retry, retryBudget } from '../../src/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { settleWith, startServer, type TestServer } from './servers.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(status: (n: number) => number): Promise<TestServer> {
  const s = await startServer((_req, res, n) => {
    res.writeHead(status(n));
    res.end(String(n));
  });
  servers.push(s);
  return s;
}

const quiet = { breaker: false, throttle: false } as const;

describe('retry budgets', () => {
  it('a failing dependency never uses up a healthy one’s retries', async () => {
    const clock = createVirtualClock();
    const down = await serve(() => 503);
    // Healthy: one request in 20 is refused once (5 %, well within the 10 % a budget allows).
    const healthy = await serve((n) => (n % 20 === 1 ? 503 : 200));
    const toDown = dependency({ name: 'down', baseUrl: down.url, clock, ...quiet });
    const toHealthy = dependency({ name: 'healthy', baseUrl: healthy.url, clock, ...quiet });
    for (let i = 0; i < 50; i++) await settleWith(toDown.fetch('/'), clock).catch(() => {});
    expect(down.seen.length).toBeLessThanOrEqual(50 + 5); // its own budget stopped its retries
    expect(toDown.budget.tryRetry()).toBe(false);
    for (let i = 0; i < 100; i++) {
      const res = await settleWith(toHealthy.fetch('/'), clock);
      expect(res.status).toBe(200); // every refused request still gets its retry
    }
    expect(healthy.seen.length).toBeGreaterThan(100);
  });

  it('an application retry() around a dependency draws from its tokens, so layers cannot multiply', async () => {
    const clock = createVirtualClock();
    const down = await serve(() => 503);
    const dep = dependency({ name: 'down', baseUrl: down.url, clock, ...quiet });
    // The dependency retried below (attempts > 1): the outer loop passes the error up.
    const first = await settleWith(
      retry(() => dep.fetch('/'), { budget: dep.budget, idempotent: true, clock }),
      clock,
    ).catch((e: unknown) => e);
    expect(down.seen).toHaveLength(3);
    expect(first).toMatchObject({ attempts: 3 });

    // With the client's own retries off, the application's loop is the one retrying layer,
    // and it spends the same tokens the client records.
    const single = dependency({ name: 'down', baseUrl: down.url, clock, retry: false, ...quiet });
    const before = down.seen.length;
    for (let i = 0; i < 100; i++) {
      await settleWith(
        retry(() => single.fetch('/'), { budget: single.budget, idempotent: true, clock }),
        clock,
      ).catch(() => {});
    }
    // 100 first attempts, and retries only while the dependency's 10 tokens stayed above 5.
    expect(down.seen.length - before).toBeLessThanOrEqual(100 + 5);
    expect(single.budget.tryRetry()).toBe(false);
  });

  it('by default: an application retry() given no budget draws from the dependency’s', async () => {
    const clock = createVirtualClock();
    const down = await serve(() => 503);
    const single = dependency({ name: 'down', baseUrl: down.url, clock, retry: false, ...quiet });
    for (let i = 0; i < 100; i++) {
      await settleWith(
        retry(() => single.fetch('/'), { idempotent: true, clock }),
        clock,
      ).catch(() => {});
    }
    // Without the shared tokens this would be 300 attempts (3 per call, nothing to stop it).
    expect(down.seen.length).toBeLessThanOrEqual(100 + 5);
    expect(single.budget.tryRetry()).toBe(false);
  });

  it('one budget passed to several dependencies is shared by them', async () => {
    const clock = createVirtualClock();
    const shared = retryBudget({ maxTokens: 4 });
    const one = await serve(() => 503);
    const two = await serve(() => 503);
    const toOne = dependency({ name: 'one', baseUrl: one.url, clock, budget: shared, ...quiet });
    const toTwo = dependency({ name: 'two', baseUrl: two.url, clock, budget: shared, ...quiet });
    await settleWith(toOne.fetch('/'), clock).catch(() => {}); // 3 failures… tokens 4 → 3 → 2: one retry
    await settleWith(toTwo.fetch('/'), clock).catch(() => {});
    expect(one.seen).toHaveLength(2);
    expect(two.seen).toHaveLength(1); // the tokens the first spent are gone for the second too
  });
});
