/**
 * The conformance suite every {@link RateStore} must pass (the memory store, the Redis store,
 * yours). Cases are data — a name and an async function that throws on failure — so any test
 * runner can take them (`for (const c of cases) it(c.name, c.run)`), and
 * {@link runConformance} runs them without one. Nothing here imports a test framework.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import type { RateDecision, RatePolicy, RateStore } from '../core/rate-store/rate-store.js';

/** One conformance case. */
export interface ConformanceCase {
  readonly name: string;
  /** Resolves when the store conforms; throws (an `AssertionError`) when it does not. */
  readonly run: () => Promise<void>;
}

type StoreFactory = () => RateStore | Promise<RateStore>;

/** Options of {@link rateStoreConformance}. */
export interface RateStoreConformanceOptions {
  /** A store to test; called once per case (returning the same store is fine). Required. */
  readonly createStore: StoreFactory;
  /**
   * Lets `ms` of the store's time pass: a virtual clock's `advance` for stores on an injected
   * clock, a real sleep for remote ones. Required.
   */
  readonly advance: (ms: number) => Promise<void>;
  /** Slack for waits measured on another clock (e.g. Redis's), in ms. @default 0 */
  readonly toleranceMs?: number;
  /** Prefix of the limiter names the cases use, so runs never share state. @default 'conformance' */
  readonly namePrefix?: string;
  /**
   * Stores whose backend is down (stopped server, unroutable port), one per failure policy
   * the store supports; the matching "store is down" cases run only when given.
   */
  readonly unavailable?: {
    /** A down store with policy `open`. */
    readonly open?: StoreFactory;
    /** A down store with policy `closed`. */
    readonly closed?: StoreFactory;
    /** A down store with policy `local`, configured for `replicas` replicas. */
    readonly local?: { readonly create: StoreFactory; readonly replicas: number };
    /** Longest a down store may take to answer, in ms (its deadline plus slack). @default 1_000 */
    readonly answerWithinMs?: number;
  };
}

/** Result of {@link runConformance}. */
export interface ConformanceReport {
  readonly passed: readonly string[];
  readonly failed: readonly { readonly name: string; readonly error: unknown }[];
}

/** Checks the invariants every decision keeps, whatever it says. */
export function assertDecisionShape(d: RateDecision, policy: RatePolicy): void {
  assert.equal(typeof d.ok, 'boolean', 'ok is a boolean');
  assert.equal(d.limit, policy.burst, 'limit is the burst');
  assert.ok(Number.isSafeInteger(d.remaining) && d.remaining >= 0, `remaining ${d.remaining}`);
  assert.ok(d.remaining <= policy.burst, 'remaining never exceeds the burst');
  assert.ok(Number.isFinite(d.resetMs) && d.resetMs >= 0, `resetMs ${d.resetMs}`);
  if (!d.ok) {
    assert.equal(d.remaining, 0, 'a refusal has remaining 0');
    assert.ok(Number.isSafeInteger(d.retryAfterMs), `retryAfterMs ${d.retryAfterMs} is whole`);
    assert.ok(d.retryAfterMs >= 1, 'retryAfterMs is at least 1');
  }
}

/** Builds the cases for one store. */
export function rateStoreConformance(options: RateStoreConformanceOptions): ConformanceCase[] {
  const { createStore, advance } = options;
  const tol = options.toleranceMs ?? 0;
  const prefix = options.namePrefix ?? 'conformance';
  let serial = 0;
  const policy = (ratePerSec: number, burst: number): RatePolicy =>
    Object.freeze({ name: `${prefix}-${serial++}`, ratePerSec, burst });
  const take = async (store: RateStore, key: string, [n, p]: readonly [number, RatePolicy]) => {
    const d = await store.take(key, n, p);
    assertDecisionShape(d, p);
    return d;
  };
  const near = (actual: number, expected: number, what: string): void => {
    assert.ok(
      Math.abs(actual - expected) <= tol + 1,
      `${what}: expected ${expected} ± ${tol + 1}, got ${actual}`,
    );
  };

  const cases: ConformanceCase[] = [
    {
      name: 'a fresh key admits exactly the burst, counting remaining down',
      run: async () => {
        const store = await createStore();
        const p = policy(0.001, 4);
        for (let left = 3; left >= 0; left--) {
          const d = await take(store, 'a', [1, p]);
          assert.equal(d.ok, true);
          assert.equal(d.remaining, left);
          assert.notEqual(d.degraded, true, 'a healthy store is not degraded');
        }
        assert.equal((await take(store, 'a', [1, p])).ok, false);
      },
    },
    {
      name: 'a refusal consumes nothing',
      run: async () => {
        const store = await createStore();
        const p = policy(0.001, 5);
        assert.equal((await take(store, 'a', [3, p])).ok, true);
        assert.equal((await take(store, 'a', [3, p])).ok, false);
        assert.equal((await take(store, 'a', [3, p])).ok, false);
        const d = await take(store, 'a', [2, p]);
        assert.equal(d.ok, true);
        assert.equal(d.remaining, 0);
      },
    },
    {
      name: 'a refusal says exactly how long until the tokens are due',
      run: async () => {
        const store = await createStore();
        const p = policy(0.1, 2); // one token per 10 s
        await take(store, 'a', [2, p]);
        const d = await take(store, 'a', [1, p]);
        assert.equal(d.ok, false);
        if (!d.ok) near(d.retryAfterMs, 10_000, 'retryAfterMs for 1 token');
        const two = await take(store, 'a', [2, p]);
        if (!two.ok) near(two.retryAfterMs, 20_000, 'retryAfterMs for 2 tokens');
      },
    },
    {
      name: 'limit is the burst and resetMs is the time until the bucket is full',
      run: async () => {
        const store = await createStore();
        const p = policy(10, 4);
        const d = await take(store, 'a', [1, p]);
        assert.equal(d.limit, 4);
        near(d.resetMs, 100, 'resetMs after one take at 10/s');
        const d3 = await take(store, 'a', [3, p]);
        near(d3.resetMs, 400, 'resetMs when empty');
      },
    },
    {
      name: 'keys are independent',
      run: async () => {
        const store = await createStore();
        const p = policy(0.001, 1);
        assert.equal((await take(store, 'a', [1, p])).ok, true);
        assert.equal((await take(store, 'a', [1, p])).ok, false);
        assert.equal((await take(store, 'b', [1, p])).ok, true);
        assert.equal((await take(store, 'tenant {42} ü', [1, p])).ok, true);
      },
    },
    {
      name: 'limiters with different names are independent',
      run: async () => {
        const store = await createStore();
        const p1 = policy(0.001, 1);
        const p2 = policy(0.001, 1);
        assert.equal((await take(store, 'a', [1, p1])).ok, true);
        assert.equal((await take(store, 'a', [1, p2])).ok, true);
        assert.equal((await take(store, 'a', [1, p1])).ok, false);
      },
    },
    {
      name: 'a name and key that split the same text differently are separate buckets',
      run: async () => {
        const store = await createStore();
        const base = policy(0.001, 1);
        const longer = { ...base, name: `${base.name}:v2` };
        assert.equal((await take(store, 'v2:bob', [1, base])).ok, true);
        assert.equal((await take(store, 'bob', [1, longer])).ok, true, `'${longer.name}' / bob`);
        assert.equal((await take(store, 'v2:bob', [1, base])).ok, false);
      },
    },
    {
      name: 'tokens come back at ratePerSec, never above the burst',
      run: async () => {
        const store = await createStore();
        const p = policy(10, 2);
        await take(store, 'a', [2, p]);
        assert.equal((await take(store, 'a', [1, p])).ok, false);
        await advance(150);
        assert.equal((await take(store, 'a', [1, p])).ok, true, 'one token after 150 ms at 10/s');
        assert.equal((await take(store, 'a', [2, p])).ok, false, 'not two');
      },
    },
    {
      name: 'healthy traffic is never refused: a burst, then one take per interval',
      run: async () => {
        const store = await createStore();
        for (const [ratePerSec, burst] of [
          [30, 3],
          [150, 15],
        ] as const) {
          const p = policy(ratePerSec, burst);
          // One short of the whole burst: after all of it, a take per interval has no slack,
          // and a real sleep that ends a little early would put it over the rate.
          for (let i = 0; i < burst - 1; i++) {
            assert.equal((await take(store, 'a', [1, p])).ok, true, `burst take ${i + 1}`);
          }
          for (let i = 0; i < 10; i++) {
            await advance(1000 / ratePerSec);
            const d = await take(store, 'a', [1, p]);
            assert.equal(d.ok, true, `${ratePerSec}/s burst ${burst}: take ${i + 1} at the rate`);
          }
        }
      },
    },
    {
      name: 'waiting the retryAfterMs a refusal gave is enough',
      run: async () => {
        const store = await createStore();
        const p = policy(20, 1);
        await take(store, 'a', [1, p]);
        const d = await take(store, 'a', [1, p]);
        assert.equal(d.ok, false);
        if (!d.ok) await advance(d.retryAfterMs + tol);
        assert.equal((await take(store, 'a', [1, p])).ok, true);
      },
    },
    {
      name: 'concurrent takes admit exactly the burst',
      run: async () => {
        const store = await createStore();
        const p = policy(0.001, 10);
        const all = await Promise.all(Array.from({ length: 25 }, () => take(store, 'a', [1, p])));
        assert.equal(all.filter((d) => d.ok).length, 10);
      },
    },
  ];

  const down = options.unavailable;
  if (down !== undefined) {
    const within = down.answerWithinMs ?? 1_000;
    const timed = async (store: RateStore, key: string, p: RatePolicy) => {
      const started = performance.now();
      const d = await store.take(key, 1, p);
      const ms = performance.now() - started;
      assert.ok(ms <= within, `a down store answered in ${ms.toFixed(1)} ms (> ${within})`);
      assertDecisionShape(d, p);
      assert.equal(d.degraded, true, 'a policy answer is marked degraded');
      return d;
    };
    if (down.open !== undefined) {
      const create = down.open;
      cases.push({
        name: 'store down, policy open: admits at once, marked degraded',
        run: async () => {
          const store = await create();
          const p = policy(0.001, 2);
          for (let i = 0; i < 5; i++) assert.equal((await timed(store, 'a', p)).ok, true);
        },
      });
    }
    if (down.closed !== undefined) {
      const create = down.closed;
      cases.push({
        name: "store down, policy closed: refuses at once with reason 'store-unavailable'",
        run: async () => {
          const store = await create();
          const p = policy(1_000, 100);
          for (let i = 0; i < 5; i++) {
            const d = await timed(store, 'a', p);
            assert.equal(d.ok, false);
            if (!d.ok) assert.equal(d.reason, 'store-unavailable');
          }
        },
      });
    }
    if (down.local !== undefined) {
      const { create, replicas } = down.local;
      cases.push({
        name: 'store down, policy local: enforces burst ÷ replicas here, marked degraded',
        run: async () => {
          const store = await create();
          const p = policy(0.001, 3 * replicas);
          for (let i = 0; i < 3; i++) assert.equal((await timed(store, 'a', p)).ok, true);
          const d = await timed(store, 'a', p);
          assert.equal(d.ok, false, 'the local share is spent');
          if (!d.ok) assert.equal(d.reason, undefined, "a local refusal is the client's quota");
        },
      });
    }
  }
  return cases;
}

/** Runs cases one after another and reports; never throws. */
export async function runConformance(
  cases: readonly ConformanceCase[],
  options?: { readonly onResult?: (name: string, error: unknown) => void },
): Promise<ConformanceReport> {
  const passed: string[] = [];
  const failed: { name: string; error: unknown }[] = [];
  for (const c of cases) {
    let error: unknown;
    try {
      await c.run();
      passed.push(c.name);
    } catch (e) {
      error = e ?? new Error('case failed');
      failed.push({ name: c.name, error });
    }
    options?.onResult?.(c.name, error);
  }
  return { passed, failed };
}
