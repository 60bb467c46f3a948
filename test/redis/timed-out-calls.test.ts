// A call the store gave up on must not act later: commands that reach Redis after their
// deadline (held by CLIENT PAUSE, or re-sent by the client after a restart) charge nothing
// and take no lease, because take scripts carry a server-side expiry. On a private
// redis-server per client flavour; the store first learns Redis's time from one reply.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis as Ioredis6 } from 'ioredis';
import { Redis as Ioredis5 } from 'ioredis5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  redisConcurrencyLimit,
  redisKey,
  redisStore,
  type RedisClientLike,
  type RedisStoreOptions,
} from '../../src/redis/index.js';
import {
  connect,
  eventually,
  mainFlavours,
  PrivateRedis,
  privateRedisForSuite,
  redisServerMissing,
  type TestClient,
} from './helpers.js';

const missing = redisServerMissing();
if (missing !== undefined) console.warn(`skipping Redis timed-out call tests: ${missing}`);

const prefix = 'timedout';
// A token bucket that never refills during a test: remaining counts every charge.
const quota = (name: string) => ({ name, ratePerSec: 0.001, burst: 9 });
const leasesHeld = async (admin: TestClient, sem: string): Promise<number> =>
  Number(await admin.command(['ZCARD', redisKey(prefix, { name: sem, id: '' }, 'lease:z')]));

describe.skipIf(missing !== undefined).each(mainFlavours)('timed-out calls over %s', (flavour) => {
  const redis = privateRedisForSuite(flavour);
  const store = (more: Partial<RedisStoreOptions> = {}) =>
    redisStore({ client: redis.c.client, prefix, onError: 'closed', ...more });
  const held = (sem: string) => leasesHeld(redis.admin, sem);

  it('five takes refused during CLIENT PAUSE are not charged when Redis resumes', async () => {
    const stalled = store({ timeoutMs: 50 });
    // A second store on the same connection, with time to spare, to read the bucket after.
    const checker = store({ timeoutMs: 5_000 });
    const p = quota('pause');
    // The script loaded with time to spare (another key), so the 50 ms store's first take is
    // not a NOSCRIPT round and then an EVAL on a busy machine.
    await checker.take('warm', 1, p);
    expect(await stalled.take('k', 1, p)).toMatchObject({ ok: true, remaining: 8 });
    await redis.admin.command(['CLIENT', 'PAUSE', '1000', 'ALL']);
    const refused = await Promise.all(Array.from({ length: 5 }, () => stalled.take('k', 1, p)));
    for (const d of refused) {
      expect(d).toMatchObject({ ok: false, degraded: true, reason: 'store-unavailable' });
    }
    // Same connection, so Redis runs this after the five held commands.
    expect(await checker.take('k', 1, p)).toMatchObject({ ok: true, remaining: 7 });
  });

  it('an acquire refused during CLIENT PAUSE takes no lease when Redis resumes', async () => {
    const sem = 'pause-sem';
    const stalled = redisConcurrencyLimit({
      store: store({ timeoutMs: 50 }),
      name: sem,
      limit: 1,
    });
    const checker = redisConcurrencyLimit({
      store: store({ timeoutMs: 5_000 }),
      name: sem,
      limit: 1,
    });
    // The script loaded with time to spare, then a reply to `stalled`, from which it learns
    // Redis's time to write its calls' expiry in. Within 50 ms: on a busy machine not always at
    // the first try, so a few.
    const loaded = await checker.acquire();
    if (loaded.ok) loaded.permit.release();
    let warm = await stalled.acquire();
    for (let i = 0; i < 4 && !warm.ok; i++) warm = await stalled.acquire();
    if (!warm.ok) throw new Error('not acquired');
    warm.permit.release();
    await eventually('the warm-up lease is released', async () => (await held(sem)) === 0);
    await redis.admin.command(['CLIENT', 'PAUSE', '1000', 'ALL']);
    expect(await stalled.acquire()).toMatchObject({ ok: false, reason: 'store-unavailable' });
    const r = await checker.acquire();
    expect(r.ok).toBe(true);
    expect(await held(sem)).toBe(1);
    if (r.ok) r.permit.release();
  });
});

/** An ioredis client as `new Redis(url)` makes it: offline queue on, unfulfilled commands re-sent. */
function resendingIoredis(flavour: 'ioredis6' | 'ioredis5', port: number) {
  const options = {
    port,
    lazyConnect: true,
    retryStrategy: () => 50,
    // The default gives up after 20 reconnects; never giving up keeps the re-send certain
    // however long the restart takes on a busy machine.
    maxRetriesPerRequest: null,
  };
  const c = flavour === 'ioredis6' ? new Ioredis6(options) : new Ioredis5(options);
  c.on('error', () => {});
  return c;
}

describe.skipIf(missing !== undefined).each(['ioredis6', 'ioredis5'] as const)(
  'commands re-sent after a restart by %s with its defaults',
  (flavour) => {
    let server: PrivateRedis;
    let raw: ReturnType<typeof resendingIoredis>;
    let admin: TestClient;

    beforeAll(async () => {
      server = await PrivateRedis.start();
      raw = resendingIoredis(flavour, server.port);
      await raw.connect();
    });
    afterAll(async () => {
      raw.disconnect();
      await admin?.close();
      await server.stop();
    });

    it('a take and an acquire that timed out while Redis restarted act on nothing when re-sent', async () => {
      const client: RedisClientLike = raw;
      const s = redisStore({ client, prefix, onError: 'closed', timeoutMs: 300 });
      const sem = 'restart-sem';
      const lim = redisConcurrencyLimit({ store: s, name: sem, limit: 1 });
      const p = quota('restart');
      expect((await s.take('warm', 1, p)).ok).toBe(true);
      // Stopped first, so neither command can run before the kill; killed while they wait.
      server.signal('SIGSTOP');
      const take = s.take('k', 1, p);
      const acquire = lim.acquire();
      await sleep(20);
      await server.kill();
      expect(await take).toMatchObject({ ok: false, reason: 'store-unavailable' });
      expect(await acquire).toMatchObject({ ok: false, reason: 'store-unavailable' });
      await server.startAgain();
      await eventually('the client is ready again', () => raw.status === 'ready');
      // Anything re-sent went out before this, on the same connection.
      expect(await raw.ping()).toBe('PONG');
      admin = await connect(flavour, server.port);
      expect(await leasesHeld(admin, sem)).toBe(0);
      const checker = redisStore({ client, prefix, onError: 'closed', timeoutMs: 5_000 });
      expect(await checker.take('k', 1, p)).toMatchObject({ ok: true, remaining: 8 });
    }, 15_000);
  },
);
