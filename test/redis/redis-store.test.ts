// The Redis store on the machine's Redis, over each client flavour: the limiters take it
// unchanged, window algorithms, the deny cache, token leases and their overshoot bound, the
// distributed concurrency limit, a client clock skewed by minutes, and option validation.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedTokenBuckets, systemClock, type Clock } from '../../src/index.js';
import {
  redisConcurrencyLimit,
  redisStore,
  StoreUnavailableError,
  type RedisStore,
} from '../../src/redis/index.js';
import {
  cleanup,
  connect,
  flavours,
  sharedRedisMissing,
  uniquePrefix,
  type TestClient,
} from './helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping Redis store tests: ${missing}`);

/** The system clock shifted by `offsetMs` (both monotonic and wall time). */
function skewedClock(offsetMs: number): Clock {
  return {
    ...systemClock,
    now: () => systemClock.now() + offsetMs,
    wallNow: () => systemClock.wallNow() + offsetMs,
  };
}

describe.skipIf(missing !== undefined).each(flavours)('redisStore over %s', (flavour) => {
  let c: TestClient;
  const prefix = uniquePrefix(`store-${flavour}`);
  let n = 0;
  const name = (): string => `lim${n++}`;
  // A generous deadline: these cases are about limits, and a shared machine can be slow.
  const store = (options: Partial<Parameters<typeof redisStore>[0]> = {}): RedisStore =>
    redisStore({ client: c.client, prefix, timeoutMs: 2_000, onError: 'closed', ...options });

  beforeAll(async () => {
    c = await connect(flavour);
  });
  afterAll(async () => {
    await cleanup(c, prefix);
    await c.close();
  });

  it('keyedTokenBuckets takes it with no other change', async () => {
    const perClient = keyedTokenBuckets({ ratePerSec: 1, burst: 2, name: name(), store: store() });
    const t0 = performance.now();
    const d1 = await perClient.tryTake('u1');
    expect(d1).toMatchObject({ ok: true, remaining: 1, limit: 2 });
    await perClient.tryTake('u1');
    const d3 = await perClient.tryTake('u1');
    // The wait is a second from the first take, less what has passed since (a busy machine
    // can spend a good part of that second between the three round trips).
    const elapsedMs = performance.now() - t0;
    expect(d3.ok).toBe(false);
    if (!d3.ok) {
      expect(d3.retryAfterMs).toBeGreaterThan(1_000 - elapsedMs - 5);
      expect(d3.retryAfterMs).toBeLessThanOrEqual(1_000);
    }
    expect((await perClient.tryTake('u2')).ok).toBe(true);
  });

  it('keeps its keys under prefix:{limiter:client}:kind with a TTL', async () => {
    const lim = name();
    await store().take('client-7', 1, { name: lim, ratePerSec: 1, burst: 5 });
    const key = `${prefix}:{${lim}:client-7}:gcra`;
    expect(Number(await c.command(['EXISTS', key]))).toBe(1);
    // Until the bucket is full again (1 s), and a second more.
    const ttl = Number(await c.command(['PTTL', key]));
    expect(ttl).toBeGreaterThan(1_000);
    expect(ttl).toBeLessThanOrEqual(2_000);
  });

  it('fixed window: exactly the limit per window, waits until the window ends', async () => {
    const s = store();
    const policy = { name: name(), limit: 3, windowMs: 60_000 };
    const got = await Promise.all(Array.from({ length: 8 }, () => s.fixedWindow('a', 1, policy)));
    expect(got.filter((d) => d.ok).length).toBe(3);
    const refused = got.find((d) => !d.ok)!;
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(refused.retryAfterMs).toBe(refused.resetMs);
    }
  });

  it('sliding window: the limit within one window', async () => {
    const s = store();
    const policy = { name: name(), limit: 4, windowMs: 60_000 };
    const got = [];
    for (let i = 0; i < 6; i++) got.push(await s.slidingWindow('a', 1, policy));
    expect(got.map((d) => d.ok)).toEqual([true, true, true, true, false, false]);
  });

  it('algorithm option: take() runs a window of burst / ratePerSec seconds', async () => {
    const s = store({ algorithm: 'fixed-window' });
    const policy = { name: name(), ratePerSec: 1, burst: 2 }; // 2 per 2 s window
    expect((await s.take('a', 2, policy)).ok).toBe(true);
    const d = await s.take('a', 1, policy);
    expect(d.ok).toBe(false);
    expect(d.resetMs).toBeLessThanOrEqual(2_000);
  });

  it('algorithm option: the window is exactly burst / ratePerSec, not whole ms', async () => {
    // 3 per 428.571… ms: rounded to 429 ms, a client at exactly 7/s would find 4 in a window.
    const s = store({ algorithm: 'fixed-window' });
    const policy = { name: name(), ratePerSec: 7, burst: 3 };
    const windowUs = Math.floor(3e6 / 7);
    const redisUs = async (): Promise<number> => {
      const [sec, us] = (await c.command(['TIME'])) as [string, string];
      return Number(sec) * 1e6 + Number(us);
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await redisUs();
      const d = await s.take('a', 1, policy);
      const after = await redisUs();
      const end = (Math.floor(before / windowUs) + 1) * windowUs;
      if (after >= end) continue; // a window ended meanwhile: once more
      expect(d.resetMs).toBeGreaterThanOrEqual(Math.ceil((end - after) / 1000));
      expect(d.resetMs).toBeLessThanOrEqual(Math.ceil((end - before) / 1000));
      return;
    }
    throw new Error('five windows ended during five takes');
  });

  it('deny cache: refusals after the first do not reach Redis until the wait is over', async () => {
    const s = store();
    // One token per 500 ms: the 50 refusals below must all fall inside one wait, and at 20/s (a
    // 50 ms wait) a run beside another test file once let the wait end mid-loop.
    const policy = { name: name(), ratePerSec: 2, burst: 1 };
    await s.take('greedy', 1, policy);
    const first = await s.take('greedy', 1, policy);
    expect(first.ok).toBe(false);
    const calls = s.stats().calls;
    for (let i = 0; i < 50; i++) expect((await s.take('greedy', 1, policy)).ok).toBe(false);
    expect(s.stats().calls).toBe(calls);
    expect(s.stats().denyCacheHits).toBe(50);
    if (!first.ok) await sleep(first.retryAfterMs + 5);
    expect((await s.take('greedy', 1, policy)).ok).toBe(true);
    expect(s.stats().calls).toBe(calls + 1);
  });

  it('small batches: the takes of one tick still decide in order, each exactly once', async () => {
    for (const maxBatchItems of [1, 3]) {
      const s = store({ maxBatchItems, denyCacheMaxKeys: 0 });
      const policy = { name: name(), ratePerSec: 0.01, burst: 5 };
      const decisions = await Promise.all(
        Array.from({ length: 7 }, () => s.take('one-key', 1, policy)),
      );
      expect(decisions.map((d) => d.ok)).toEqual([true, true, true, true, true, false, false]);
      expect(s.stats().calls).toBe(7);
    }
  });

  it('deny cache off: every decision asks Redis', async () => {
    const s = store({ denyCacheMaxKeys: 0 });
    const policy = { name: name(), ratePerSec: 0.01, burst: 1 };
    for (let i = 0; i < 5; i++) await s.take('a', 1, policy);
    expect(s.stats()).toMatchObject({ calls: 5, denyCacheHits: 0 });
  });

  it('leases: a hot key spends a batch locally, and a fixed window still never exceeds N', async () => {
    const replicas = Array.from({ length: 3 }, () =>
      store({ leaseMaxBatch: 10, leaseMaxHoldMs: 200, replicas: 3 }),
    );
    const policy = { name: name(), limit: 60, windowMs: 60_000 };
    let admitted = 0;
    for (let i = 0; i < 60; i++) {
      const ds = await Promise.all(replicas.map((r) => r.fixedWindow('hot', 1, policy)));
      admitted += ds.filter((d) => d.ok).length;
    }
    // Leases stranded in other replicas may leave a few tokens unused, never extra.
    expect(admitted).toBeLessThanOrEqual(60);
    expect(admitted).toBeGreaterThanOrEqual(40);
    const calls = replicas.reduce((sum, r) => sum + r.stats().calls, 0);
    const hits = replicas.reduce((sum, r) => sum + r.stats().leaseHits, 0);
    expect(hits).toBeGreaterThan(0);
    expect(calls).toBeLessThan(180);
  });

  it('leases: a token bucket overshoots by at most rate × leaseMaxHoldMs', async () => {
    const holdMs = 100;
    const replicas = Array.from({ length: 3 }, () =>
      store({ leaseMaxBatch: 8, leaseMaxHoldMs: holdMs, replicas: 3 }),
    );
    const policy = { name: name(), ratePerSec: 200, burst: 20 };
    const started = performance.now();
    let admitted = 0;
    while (performance.now() - started < 600) {
      const ds = await Promise.all(
        replicas.flatMap((r) => [r.take('hot', 1, policy), r.take('hot', 1, policy)]),
      );
      admitted += ds.filter((d) => d.ok).length;
      await sleep(1);
    }
    const spanMs = performance.now() - started;
    const hits = replicas.reduce((sum, r) => sum + r.stats().leaseHits, 0);
    const bound = policy.burst + (policy.ratePerSec * (spanMs + holdMs)) / 1000;
    expect(hits).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(Math.floor(bound));
  });

  it('a client clock skewed by minutes changes nothing: limits run on Redis time', async () => {
    const skewed = [-7 * 60_000, 0, 7 * 60_000].map((offset) =>
      store({ clock: skewedClock(offset), denyCacheMaxKeys: 0 }),
    );
    const fw = { name: name(), limit: 9, windowMs: 60_000 };
    const got = await Promise.all(
      Array.from({ length: 30 }, (_, i) => skewed[i % 3]!.fixedWindow('a', 1, fw)),
    );
    expect(got.filter((d) => d.ok).length).toBe(9);
    const tb = { name: name(), ratePerSec: 0.001, burst: 5 };
    const taken = await Promise.all(
      Array.from({ length: 15 }, (_, i) => skewed[i % 3]!.take('a', 1, tb)),
    );
    expect(taken.filter((d) => d.ok).length).toBe(5);
    for (const d of taken) if (!d.ok) expect(d.retryAfterMs).toBeGreaterThan(900_000);
  });

  describe('redisConcurrencyLimit', () => {
    it('grants up to the limit across stores, with increasing fences; release is idempotent', async () => {
      const a = redisConcurrencyLimit({ store: store(), name: name(), limit: 2 });
      const b = redisConcurrencyLimit({ store: store(), name: (n--, name()), limit: 2 });
      const p1 = await a.acquire();
      const p2 = await b.acquire();
      const p3 = await a.acquire();
      expect(p1.ok && p2.ok).toBe(true);
      expect(p3).toMatchObject({ ok: false, reason: 'queue-full' });
      if (!p1.ok || !p2.ok) return;
      expect(p2.permit.fence).toBeGreaterThan(p1.permit.fence);
      expect(a.active).toBe(1);
      p1.permit.release();
      p1.permit.release();
      expect(p1.permit.released).toBe(true);
      expect(a.active).toBe(0);
      await sleep(20);
      const p4 = await b.acquire();
      expect(p4.ok).toBe(true);
      if (p4.ok) p4.permit.release();
      p2.permit.release();
    });

    it('weights count against the limit; keys are separate semaphores', async () => {
      const lim = redisConcurrencyLimit({ store: store(), name: name(), limit: 3 });
      const heavy = await lim.acquire({ weight: 3, key: 't1' });
      expect(heavy.ok).toBe(true);
      expect((await lim.acquire({ key: 't1' })).ok).toBe(false);
      const other = await lim.acquire({ key: 't2', weight: 2 });
      expect(other.ok).toBe(true);
      await expect(lim.acquire({ weight: 4 })).rejects.toThrow(/weight/);
      if (heavy.ok) heavy.permit.release();
      if (other.ok) other.permit.release();
    });

    it('a caller waits in the local line until a lease is released', async () => {
      const lim = redisConcurrencyLimit({
        store: store(),
        name: name(),
        limit: 1,
        maxQueue: 5,
        maxQueueWaitMs: 2_000,
        pollMs: 10,
      });
      const first = await lim.acquire();
      expect(first.ok).toBe(true);
      const waiting = lim.acquire();
      await sleep(30);
      expect(lim.queued).toBe(1);
      if (first.ok) first.permit.release();
      const second = await waiting;
      expect(second.ok).toBe(true);
      if (second.ok) second.permit.release();
    });

    it('the line is bounded in time, and an aborted waiter leaves at once', async () => {
      const lim = redisConcurrencyLimit({
        store: store(),
        name: name(),
        limit: 1,
        maxQueue: 1,
        maxQueueWaitMs: 80,
        pollMs: 10,
      });
      const held = await lim.acquire();
      expect(await lim.acquire()).toMatchObject({ ok: false, reason: 'queue-timeout' });
      const controller = new AbortController();
      const waiting = lim.acquire({ signal: controller.signal });
      expect(await lim.acquire()).toMatchObject({ ok: false, reason: 'queue-full' });
      controller.abort();
      expect(await waiting).toMatchObject({ ok: false, reason: 'aborted' });
      if (held.ok) held.permit.release();
    });

    it('renews held leases; a lease gone from Redis is reported lost and its signal aborts', async () => {
      const lim = redisConcurrencyLimit({
        store: store(),
        name: name(),
        limit: 1,
        leaseTtlMs: 300,
        renewEveryMs: 50,
      });
      const lost: number[] = [];
      lim.onLeaseLost((e) => lost.push(e.fence));
      const r = await lim.acquire();
      if (!r.ok) throw new Error('not acquired');
      await sleep(500); // outlives the TTL: only renewals keep it
      expect(r.permit.lost).toBe(false);
      expect(await r.permit.renew()).toBe(true);
      const keys = (await c.command(['KEYS', `${prefix}:*lease*`])) as string[];
      await c.command(['DEL', ...keys]);
      expect(await r.permit.renew()).toBe(false);
      expect(r.permit.lost).toBe(true);
      expect(r.permit.signal.aborted).toBe(true);
      expect(lost).toEqual([r.permit.fence]);
      r.permit.release();
    });

    it('a replica that dies holding a lease: its lease expires after the TTL and the slot comes back', async () => {
      const doomed = await connect(flavour);
      const lim = name();
      // A TTL far above the renewal period: a process stalled past the TTL before its first
      // renewal (a busy machine) loses the lease for real, and a 300 ms TTL once did in CI.
      const options = { name: lim, limit: 1, leaseTtlMs: 1_000, renewEveryMs: 100 };
      const dying = redisConcurrencyLimit({
        ...options,
        store: redisStore({ client: doomed.client, prefix, onError: 'closed' }),
      });
      const survivor = redisConcurrencyLimit({ ...options, store: store() });
      const held = await dying.acquire();
      expect(held.ok).toBe(true);
      await sleep(250); // renewed twice on a free event loop
      expect((await survivor.acquire()).ok).toBe(false);
      await doomed.close(); // the replica is gone without releasing
      await sleep(1_200); // past the TTL from its last renewal
      const r = await survivor.acquire();
      expect(r.ok).toBe(true);
      if (r.ok && held.ok) {
        expect(r.permit.fence).toBeGreaterThan(held.permit.fence);
        r.permit.release();
      }
    });

    it('run() holds a lease for the work and throws the matching error when refused', async () => {
      const lim = redisConcurrencyLimit({ store: store(), name: name(), limit: 1 });
      let inside = 0;
      const slow = lim.run(async ({ fence }) => {
        inside = fence;
        await sleep(50);
        return 'done';
      });
      await sleep(10);
      await expect(lim.run(() => 'x')).rejects.toMatchObject({ code: 'SPILLWAY_E_QUEUE_FULL' });
      expect(await slow).toBe('done');
      expect(inside).toBeGreaterThan(0);
      expect(lim.active).toBe(0);
      expect(new StoreUnavailableError().code).toBe('SPILLWAY_E_STORE_UNAVAILABLE');
    });
  });

  it('names the option in configuration errors', () => {
    expect(() => redisStore({ client: c.client, timeoutMs: -1 })).toThrow(
      'Expected `timeoutMs` to be a finite number greater than 0, got -1 (number)',
    );
    expect(() => redisStore({ client: c.client, prefix: 'a{b}' })).toThrow(/`prefix`/);
    expect(() => redisStore({ client: c.client, onError: 'maybe' as 'open' })).toThrow(
      /`onError` to be one of 'open', 'closed', 'local'/,
    );
    expect(() => redisStore({ client: {} as never })).toThrow(/`client`/);
    for (const bad of [0, 65, 2.5, '4']) {
      expect(() => redisStore({ client: c.client, maxBatchItems: bad as number })).toThrow(
        /`maxBatchItems` to be a whole number from 1 to 64/,
      );
    }
    expect(() => redisConcurrencyLimit({ store: {} as never, name: 'x', limit: 1 })).toThrow(
      /`store`/,
    );
  });
});
