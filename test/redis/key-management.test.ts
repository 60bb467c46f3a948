// Needs: Redis on 127.0.0.1:6379, and redis-server installed (a private one is killed).
// Key management on the Redis store — get, reset, penalize, reward — first as scripts with
// time pinned (exact edges for GCRA, fixed and sliding windows), then through
// keyedTokenBuckets over each client flavour: seen by a second replica at once, this
// process's deny cache and leases forgotten, and a rejection naming the store when Redis is
// down (never a change that did not happen reported as done).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedTokenBuckets } from '../../src/index.js';
import { keyManagementConformance } from '../../src/testing/index.js';
import { redisStore, StoreUnavailableError, type RedisStore } from '../../src/redis/index.js';
import {
  fixedWindowAdjustScript,
  forgetKeyScript,
  gcraAdjustScript,
  slidingWindowAdjustScript,
} from '../../src/redis/key-scripts.js';
import {
  fixedWindowScript,
  gcraScript,
  slidingWindowScript,
  type RedisScript,
} from '../../src/redis/scripts.js';
import {
  cleanup,
  connect,
  flavours,
  mainFlavours,
  privateRedisForSuite,
  redisServerMissing,
  scriptsForSuite,
  sharedRedisMissing,
  uniquePrefix,
  type TestClient,
} from './helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping Redis key-management tests: ${missing}`);
const noServer = redisServerMissing();

describe.skipIf(missing !== undefined)('key-management scripts (time pinned)', () => {
  const redis = scriptsForSuite('keyscripts');
  const run = async (s: RedisScript, keys: string[], args: (string | number)[]) =>
    (await redis.sc.run(s, keys, args)) as number[];
  const sec = 1_700_000_000_000_000;

  it('GCRA: read, penalty into debt, reward capped at the burst, forget', async () => {
    const k = redis.key();
    const T = 100_000; // 10 per second, burst 5
    const adjust = (delta: number, at: number) =>
      run(gcraAdjustScript, [k], [T, 5, delta, '', sec + at]);
    const take = (at: number) => run(gcraScript, [k], [T, 5, 1, 1, '', sec + at]);
    // Reply: remaining, retryAfterMs, resetAfterMs, now.
    expect(await adjust(0, 0)).toEqual([5, 0, 0, sec]);
    await take(0);
    await take(0);
    expect(await adjust(0, 0)).toEqual([3, 0, 200, sec]);
    // Penalty of 6: 3 - 6 = a debt of 3; one token 400 ms away, full in 800.
    expect(await adjust(-6, 0)).toEqual([0, 400, 800, sec]);
    expect((await take(399_000))[0]).toBe(0);
    expect((await take(400_000))[0]).toBe(1);
    // Reward past the burst: full, the key gone.
    expect(await adjust(100, 400_000)).toEqual([5, 0, 0, sec + 400_000]);
    expect(await redis.c.command(['EXISTS', k])).toBe(0);
    await take(400_000);
    expect(await run(forgetKeyScript, [k], ['', sec])).toEqual([1, sec]);
    expect(await adjust(0, 400_000)).toEqual([5, 0, 0, sec + 400_000]);
  });

  it('fixed window: counts move within the window; a penalty past the limit ends with it', async () => {
    const k = redis.key();
    const W = 1_000; // ms; 4 per window
    const adjust = (delta: number, at: number) =>
      run(fixedWindowAdjustScript, [k], [W, 4, delta, '', sec + at]);
    const take = (at: number) => run(fixedWindowScript, [k], [W, 4, 1, 1, '', sec + at]);
    await take(0);
    expect(await adjust(0, 250_000)).toEqual([3, 0, 750, sec + 250_000]);
    expect(await adjust(-5, 250_000)).toEqual([0, 750, 750, sec + 250_000]);
    expect((await take(999_999))[0]).toBe(0);
    expect((await take(1_000_000))[0]).toBe(1);
    expect(await adjust(3, 1_000_000)).toEqual([4, 0, 0, sec + 1_000_000]);
  });

  it('sliding window: a reward lowers the current count; the previous window still counts', async () => {
    const k = redis.key();
    const W = 1_000; // ms; 4 per window
    const adjust = (delta: number, at: number) =>
      run(slidingWindowAdjustScript, [k], [W, 4, delta, '', sec + at]);
    const take = (at: number) => run(slidingWindowScript, [k], [W, 4, 1, 1, '', sec + at]);
    for (let i = 0; i < 4; i++) await take(0);
    expect((await adjust(0, 0)).slice(0, 2)).toEqual([0, (await take(0))[2]]);
    expect((await adjust(2, 0))[0]).toBe(2);
    // Next window, early: the previous window's 2 still count almost whole.
    const next = await adjust(0, 1_000_000);
    expect(next[0]).toBe(3);
    expect((await adjust(-10, 1_000_000))[0]).toBe(0);
  });
});

describe.skipIf(missing !== undefined).each(flavours)('key management over %s', (flavour) => {
  let c: TestClient;
  let other: TestClient;
  const prefix = uniquePrefix(`keys-${flavour}`);
  let n = 0;
  const name = (): string => `lim${n++}`;
  const store = (client: TestClient, options: Partial<Parameters<typeof redisStore>[0]> = {}) =>
    redisStore({ client: client.client, prefix, timeoutMs: 2_000, ...options });

  beforeAll(async () => {
    c = await connect(flavour);
    other = await connect(flavour);
  });
  afterAll(async () => {
    await cleanup(c, prefix);
    await Promise.all([c.close(), other.close()]);
  });

  // A token every 100 s: nothing refills within a test, whatever the machine's pace.
  const policy = (store: RedisStore, lim: string) =>
    keyedTokenBuckets({ ratePerSec: 0.01, burst: 3, name: lim, store });

  for (const kase of keyManagementConformance({
    createStore: () => store(c),
    toleranceMs: 1_000, // Redis's clock moves between calls on a busy machine
    namePrefix: `conf-${flavour}`,
  }))
    it(`conforms: ${kase.name}`, kase.run);

  it('get, penalize, reward and reset, each seen by the other replica at once', async () => {
    const lim = name();
    const a = policy(store(c), lim);
    const b = policy(store(other), lim);
    expect(await a.get('u')).toEqual({ remaining: 3, limit: 3, retryAfterMs: 0, resetMs: 0 });
    await a.tryTake('u');
    expect((await b.get('u')).remaining).toBe(2);
    const penalized = await b.penalize('u', 4); // 2 - 4: a debt of 2
    expect(penalized.remaining).toBe(0);
    expect(penalized.retryAfterMs).toBeGreaterThan(200_000);
    expect((await a.tryTake('u')).ok).toBe(false);
    expect((await a.reward('u', 3)).remaining).toBe(1);
    expect((await b.tryTake('u')).ok).toBe(true);
    expect((await b.tryTake('u')).ok).toBe(false);
    await b.reset('u');
    expect(await a.get('u')).toMatchObject({ remaining: 3, retryAfterMs: 0, resetMs: 0 });
  });

  it('a reset or reward clears this process’s deny cache and leases for the key', async () => {
    const lim = name();
    const q = policy(store(c, { denyCacheMaxKeys: 100, leaseMaxBatch: 3 }), lim);
    for (let i = 0; i < 3; i++) expect((await q.tryTake('u')).ok).toBe(true);
    expect((await q.tryTake('u')).ok).toBe(false); // now in the deny cache
    await q.reset('u');
    expect((await q.tryTake('u')).ok).toBe(true);
    // A hot key leases a batch (the second take within leaseMaxHoldMs takes 5 from Redis,
    // spends 1 and holds 4 here); a penalty drops the lease, so the next take asks Redis.
    const leased = store(c, { leaseMaxBatch: 5, leaseMaxHoldMs: 60_000, denyCacheMaxKeys: 0 });
    const hot = keyedTokenBuckets({ ratePerSec: 0.01, burst: 20, name: name(), store: leased });
    await hot.tryTake('u');
    await hot.tryTake('u');
    expect(leased.stats().calls).toBe(2);
    expect((await hot.tryTake('u')).ok).toBe(true);
    expect(leased.stats().leaseHits).toBe(1);
    await hot.penalize('u', 30);
    expect((await hot.tryTake('u')).ok).toBe(false);
    expect(leased.stats().leaseHits).toBe(1);
  });

  it('the window algorithms manage the keys their takes use', async () => {
    for (const algorithm of ['fixed-window', 'sliding-window'] as const) {
      const q = keyedTokenBuckets({
        ratePerSec: 0.01,
        burst: 3,
        name: name(),
        store: store(c, { algorithm }),
      });
      await q.tryTake('u');
      expect((await q.get('u')).remaining, algorithm).toBe(2);
      await q.penalize('u', 2);
      expect((await q.tryTake('u')).ok, algorithm).toBe(false);
      await q.reset('u');
      expect((await q.get('u')).remaining, algorithm).toBe(3);
    }
  });
});

describe.skipIf(missing !== undefined || noServer !== undefined).each(mainFlavours)(
  'key management with Redis down, over %s',
  (flavour) => {
    const r = privateRedisForSuite(flavour);

    it('rejects with StoreUnavailableError under every policy, within the deadline', async () => {
      const stores = (['open', 'closed', 'local'] as const).map((onError) =>
        redisStore({ client: r.c.client, prefix: 'down', timeoutMs: 50, onError }),
      );
      const quotas = stores.map((store) =>
        keyedTokenBuckets({ ratePerSec: 1, burst: 2, name: 'down', store }),
      );
      // Up, it works (a generous deadline: a fresh server answers NOSCRIPT first).
      const up = redisStore({ client: r.c.client, prefix: 'down', timeoutMs: 2_000 });
      await keyedTokenBuckets({ ratePerSec: 1, burst: 2, name: 'down', store: up }).penalize(
        'u',
        1,
      );
      await r.server.kill();
      for (const q of quotas) {
        const t0 = performance.now();
        await expect(q.reset('u')).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(q.get('u')).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(q.penalize('u', 1)).rejects.toBeInstanceOf(StoreUnavailableError);
        // Three calls, each bounded by the 50 ms deadline (a busy machine's slack on top).
        expect(performance.now() - t0).toBeLessThan(2_000);
      }
      // Decisions still answer by policy: management failing changes nothing else.
      expect((await quotas[0]!.tryTake('u')).ok).toBe(true);
      expect(await quotas[1]!.tryTake('u')).toMatchObject({
        ok: false,
        reason: 'store-unavailable',
      });
      await r.server.startAgain();
    });
  },
);
