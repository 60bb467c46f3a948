// Clean-up that must reach Redis even when the store cannot call it right now: a release or a
// renewal made while the in-flight cap is reached, or while the client is reconnecting (its
// connection killed with CLIENT KILL ID), goes out once the client is ready again; a lease
// survives reconnects; and a restart that loses every key while permits are held is reported
// as lost leases, never as capacity taken twice. On a private redis-server per client flavour.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  redisConcurrencyLimit,
  redisKey,
  redisStore,
  type RedisConcurrencyLimitOptions,
  type RedisStore,
  type RedisStoreOptions,
} from '../../src/redis/index.js';
import {
  eventually,
  mainFlavours,
  onceReconnecting,
  privateRedisForSuite,
  redisServerMissing,
} from './helpers.js';

const missing = redisServerMissing();
if (missing !== undefined) console.warn(`skipping Redis lease clean-up tests: ${missing}`);

const prefix = 'cleanup';
// Never reached: these cases are about leases, the takes only fill the in-flight cap.
const busyPolicy = { name: 'busy', ratePerSec: 1_000, burst: 1_000 };

describe.skipIf(missing !== undefined).each(mainFlavours)('lease clean-up over %s', (flavour) => {
  const redis = privateRedisForSuite(flavour);
  let n = 0;
  // A generous deadline: nothing here should time out on a slow machine.
  const store = (more: Partial<RedisStoreOptions> = {}): RedisStore =>
    redisStore({ client: redis.c.client, prefix, timeoutMs: 2_000, onError: 'closed', ...more });
  const zset = (sem: string): string => redisKey(prefix, { name: sem, id: '' }, 'lease:z');
  const held = async (sem: string): Promise<number> =>
    Number(await redis.admin.command(['ZCARD', zset(sem)]));
  /** The expiry (Redis ms) of the only lease of `sem`. */
  const expiry = async (sem: string): Promise<number> => {
    // Flat [member, score] or [[member, score]], depending on the client's protocol.
    const got = (await redis.admin.command(['ZRANGE', zset(sem), '0', '0', 'WITHSCORES'])) as [];
    return Number(got.flat()[1]);
  };
  /** A limit of 1 on a fresh semaphore, and the permit it granted. */
  const holdOne = async (s: RedisStore, timing: Partial<RedisConcurrencyLimitOptions> = {}) => {
    const sem = `sem${n++}`;
    const lim = redisConcurrencyLimit({ store: s, name: sem, limit: 1, ...timing });
    const r = await lim.acquire();
    if (!r.ok) throw new Error('not acquired');
    return { sem, lim, permit: r.permit };
  };
  // Renewals only when the test asks for one.
  const noAutoRenewal = { leaseTtlMs: 60_000, renewEveryMs: 50_000 };
  /** Kills the store client's connection; `then` runs as soon as it starts reconnecting. */
  const killConnection = async (then: () => void): Promise<void> => {
    const id = String(await redis.c.command(['CLIENT', 'ID']));
    const reconnecting = new Promise<void>((resolve) =>
      onceReconnecting(redis.c, () => {
        then();
        resolve();
      }),
    );
    await redis.admin.command(['CLIENT', 'KILL', 'ID', id]);
    await reconnecting;
  };
  const released = (sem: string) =>
    eventually('the lease is released', async () => (await held(sem)) === 0);

  it('a release made while maxInFlight is reached still reaches Redis', async () => {
    const s = store({ maxInFlight: 2 });
    const { sem, lim, permit } = await holdOne(s);
    const busy = [s.take('a', 1, busyPolicy), s.take('b', 1, busyPolicy)];
    expect(s.inFlight).toBe(2);
    permit.release();
    await Promise.all(busy);
    await released(sem);
    const again = await lim.acquire();
    expect(again.ok).toBe(true);
    if (again.ok) again.permit.release();
  });

  it('a release made while the client reconnects goes out once it is ready', async () => {
    const { sem, lim, permit } = await holdOne(store());
    await killConnection(() => permit.release());
    expect(lim.active).toBe(0);
    await released(sem);
    await eventually('the slot can be taken again', async () => {
      const again = await lim.acquire();
      if (again.ok) again.permit.release();
      return again.ok;
    });
  });

  it('a renewal made while maxInFlight is reached still extends the lease', async () => {
    const s = store({ maxInFlight: 1 });
    const { sem, permit } = await holdOne(s, noAutoRenewal);
    const before = await expiry(sem);
    await sleep(20);
    const busy = s.take('a', 1, busyPolicy);
    expect(s.inFlight).toBe(1);
    expect(await permit.renew()).toBe(true);
    expect(await expiry(sem)).toBeGreaterThan(before);
    await busy;
    permit.release();
  });

  it('a renewal made while the client reconnects goes out once it is ready', async () => {
    const { sem, permit } = await holdOne(store(), noAutoRenewal);
    const before = await expiry(sem);
    await sleep(20);
    let renewing: Promise<boolean> | undefined;
    await killConnection(() => {
      renewing = permit.renew();
    });
    expect(await renewing).toBe(true);
    await eventually('the lease is extended', async () => (await expiry(sem)) > before);
    expect(permit.lost).toBe(false);
    permit.release();
    await released(sem);
  });

  it('a lease outlives reconnects: renewed after each, released once at the end', async () => {
    const { sem, permit } = await holdOne(store(), { leaseTtlMs: 2_000, renewEveryMs: 400 });
    for (let i = 0; i < 3; i++) {
      await killConnection(() => {});
      await sleep(900);
    }
    // Well past the TTL from the acquire: only renewals after the reconnects kept it.
    expect(permit.lost).toBe(false);
    expect(permit.signal.aborted).toBe(false);
    expect(await held(sem)).toBe(1);
    permit.release();
    await released(sem);
  });

  it('a restart that loses every key while permits are held: leases lost, capacity counted once', async () => {
    const sem = `sem${n++}`;
    const lim = redisConcurrencyLimit({
      store: store(),
      name: sem,
      limit: 2,
      leaseTtlMs: 3_000,
      renewEveryMs: 150,
    });
    const lost: number[] = [];
    lim.onLeaseLost((e) => lost.push(e.fence));
    const permits = async (why: string) =>
      (await Promise.all([lim.acquire(), lim.acquire()])).map((got) => {
        if (!got.ok) throw new Error(`not acquired ${why}`);
        return got.permit;
      });
    const old = await permits('before the restart');
    await redis.server.kill();
    await redis.server.startAgain();
    await eventually('both leases are reported lost', () => old.every((p) => p.lost), 5_000);
    expect(old.every((p) => p.signal.aborted)).toBe(true);
    expect(lost.sort()).toEqual(old.map((p) => p.fence).sort());
    // Redis forgot the old leases: the limit is free again, with fences above the old ones.
    const fresh = await permits('after the restart');
    for (const p of fresh) expect(p.fence).toBeGreaterThan(Math.max(...old.map((o) => o.fence)));
    // Releasing the lost permits gives back nothing the new holders hold.
    for (const p of old) p.release();
    await sleep(100);
    expect(await held(sem)).toBe(2);
    expect(await lim.acquire()).toMatchObject({ ok: false, reason: 'queue-full' });
    expect(lim.active).toBe(2);
    for (const p of fresh) p.release();
    await released(sem);
  }, 15_000);
});
