/**
 * The conformance cases for a {@link RateStore}'s key management — `peek`, `reset`, `adjust` —
 * which the memory store and the Redis store both pass, as data like `rateStoreConformance`'s
 * cases (run them with any test runner, or `runConformance`). Only for stores that have them.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { RateKeyState, RatePolicy, RateStore } from '../core/rate-store/rate-store.js';
import type { ConformanceCase } from './rate-store-conformance.js';

/** Options of {@link keyManagementConformance}. */
export interface KeyManagementConformanceOptions {
  /** A store to test (with `peek`, `reset` and `adjust`); called once per case. Required. */
  readonly createStore: () => RateStore | Promise<RateStore>;
  /** Slack for waits measured on another clock (e.g. Redis's), in ms. @default 0 */
  readonly toleranceMs?: number;
  /** Prefix of the limiter names the cases use, so runs never share state. @default 'keys' */
  readonly namePrefix?: string;
}

type Managed = Required<Pick<RateStore, 'peek' | 'reset' | 'adjust'>> & RateStore;

/** Builds the key-management cases for one store. */
export function keyManagementConformance(
  options: KeyManagementConformanceOptions,
): ConformanceCase[] {
  const tol = options.toleranceMs ?? 0;
  const prefix = options.namePrefix ?? 'keys';
  let serial = 0;
  // A token every 1,000 s: nothing refills while a case runs, whatever the store's clock.
  const policy = (burst: number): RatePolicy =>
    Object.freeze({ name: `${prefix}-${serial++}`, ratePerSec: 0.001, burst });
  const store = async (): Promise<Managed> => {
    const s = (await options.createStore()) as Partial<Managed>;
    for (const m of ['peek', 'reset', 'adjust'] as const) {
      assert.equal(typeof s[m], 'function', `the store has ${m}`);
    }
    return s as Managed;
  };
  const near = (actual: number, expected: number, what: string): void => {
    assert.ok(
      Math.abs(actual - expected) <= tol + 1,
      `${what}: expected ${expected} ± ${tol + 1}, got ${actual}`,
    );
  };
  const shape = (k: RateKeyState, p: RatePolicy): void => {
    assert.equal(k.limit, p.burst, 'limit is the burst');
    for (const f of ['remaining', 'retryAfterMs', 'resetMs'] as const) {
      assert.ok(Number.isSafeInteger(k[f]) && k[f] >= 0, `${f} ${k[f]} is a whole number ≥ 0`);
    }
    assert.equal(k.retryAfterMs === 0, k.remaining >= 1, 'a wait exactly when nothing is left');
  };

  return [
    {
      name: 'peek reads without taking; a key never seen is full',
      run: async () => {
        const s = await store();
        const p = policy(3);
        const fresh = await s.peek('a', p);
        shape(fresh, p);
        assert.deepEqual(fresh, { remaining: 3, limit: 3, retryAfterMs: 0, resetMs: 0 });
        await s.take('a', 2, p);
        const after = await s.peek('a', p);
        assert.equal(after.remaining, 1);
        near(after.resetMs, 2_000_000, 'resetMs after two takes');
        assert.equal((await s.peek('a', p)).remaining, 1, 'peeking twice takes nothing');
      },
    },
    {
      name: 'reset makes a spent key full again, and a key never seen stays full',
      run: async () => {
        const s = await store();
        const p = policy(2);
        await s.take('a', 2, p);
        assert.equal((await s.take('a', 1, p)).ok, false);
        await s.reset('a', p);
        assert.equal((await s.take('a', 2, p)).ok, true);
        await s.reset('never-seen', p);
        assert.equal((await s.peek('never-seen', p)).remaining, 2);
      },
    },
    {
      name: 'a penalty may leave a debt: every take refused, the wait until it is paid',
      run: async () => {
        const s = await store();
        const p = policy(2);
        const k = await s.adjust('a', -5, p); // 2 - 5 = -3: a token is 4 refills away
        shape(k, p);
        assert.equal(k.remaining, 0);
        near(k.retryAfterMs, 4_000_000, 'retryAfterMs with a debt of 3');
        near(k.resetMs, 5_000_000, 'resetMs with a debt of 3');
        const d = await s.take('a', 1, p);
        assert.equal(d.ok, false);
        if (!d.ok) near(d.retryAfterMs, 4_000_000, 'a take is told the same wait');
      },
    },
    {
      name: 'a reward gives tokens back, never past the burst, and pays a debt first',
      run: async () => {
        const s = await store();
        const p = policy(3);
        await s.take('a', 3, p);
        assert.equal((await s.adjust('a', 2, p)).remaining, 2);
        const full = await s.adjust('a', 100, p);
        assert.deepEqual(full, { remaining: 3, limit: 3, retryAfterMs: 0, resetMs: 0 });
        assert.equal((await s.take('a', 3, p)).ok, true);
        assert.equal((await s.take('a', 1, p)).ok, false);
        await s.adjust('b', -4, p); // 3 - 4 = -1
        assert.equal((await s.adjust('b', 2, p)).remaining, 1);
      },
    },
    {
      name: 'keys and limiters are managed apart',
      run: async () => {
        const s = await store();
        const p = policy(1);
        const q = policy(1);
        await s.adjust('a', -1, p);
        assert.equal((await s.peek('b', p)).remaining, 1, 'another key');
        assert.equal((await s.peek('a', q)).remaining, 1, 'another limiter');
        await s.reset('b', p);
        assert.equal((await s.peek('a', p)).remaining, 0, 'a reset of another key');
      },
    },
  ];
}
