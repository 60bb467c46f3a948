// A release always reaches Redis ahead of the acquire made after it: on a cold script cache
// (SCRIPT FLUSH between calls, the acquire script loaded again first and the release's not, so
// a release sent by EVALSHA would meet NOSCRIPT and go out again behind the acquire), and
// right after a reconnect (releases made while the connection was down wait in the clean-up
// lane; the first acquire once it is back must not overtake them). Every acquire here has a
// free slot when it is made, and no line to wait in: any refusal is a wrong one. On a private
// redis-server per client flavour.
import { describe, expect, it } from 'vitest';
import { redisConcurrencyLimit, redisStore, type LeasePermit } from '../../src/redis/index.js';
import {
  flavours,
  onceReconnecting,
  privateRedisForSuite,
  redisServerMissing,
  type TestClient,
} from './helpers.js';

const missing = redisServerMissing();
if (missing !== undefined) console.warn(`skipping Redis release-order tests: ${missing}`);

/** Calls `fn` synchronously when `c` is connected again (before any timer can run). */
function onceReady(c: TestClient, fn: () => void): void {
  (c.client as unknown as { once(event: string, fn: () => void): void }).once('ready', fn);
}

describe.skipIf(missing !== undefined).each(flavours)('release order over %s', (flavour) => {
  const redis = privateRedisForSuite(flavour);
  let n = 0;
  const limitOf = (limit: number) =>
    redisConcurrencyLimit({
      store: redisStore({ client: redis.c.client, prefix: 'order', timeoutMs: 2_000 }),
      name: `sem${n++}`,
      limit,
    });
  const permitOf = (r: Awaited<ReturnType<ReturnType<typeof limitOf>['acquire']>>) => {
    if (!r.ok) throw new Error(`refused: ${r.reason}`);
    return r.permit;
  };

  it('SCRIPT FLUSH between calls: release then acquire never refuses', async () => {
    const limit = 4;
    const lim = limitOf(limit);
    const held: LeasePermit[] = [];
    for (let i = 0; i < limit; i++) held.push(permitOf(await lim.acquire()));
    const refused: string[] = [];
    for (let round = 0; round < 6; round++) {
      await redis.admin.command(['SCRIPT', 'FLUSH']);
      // Every other round the acquire script is cached again first (by an acquire on another
      // key), the release script not: the case where EVALSHA would reorder them.
      if (round % 2 === 0) permitOf(await lim.acquire({ key: `warm${round}` })).release();
      for (let i = 0; i < limit; i++) {
        held[i]!.release();
        const r = await lim.acquire();
        if (r.ok) held[i] = r.permit;
        else refused.push(`round ${round}, slot ${i}: ${r.reason}`);
      }
      if (refused.length > 0) break;
    }
    expect(refused).toEqual([]);
    for (const p of held) p.release();
  });

  it('releases made while reconnecting go out before the first acquire after it', async () => {
    const lim = limitOf(2);
    const held = [permitOf(await lim.acquire()), permitOf(await lim.acquire())];
    const id = String(await redis.c.command(['CLIENT', 'ID']));
    const again = new Promise<Awaited<ReturnType<typeof lim.acquire>>[]>((resolve) => {
      onceReconnecting(redis.c, () => {
        for (const p of held) p.release(); // the client is not ready: they wait in the lane
        onceReady(redis.c, () => resolve(Promise.all([lim.acquire(), lim.acquire()])));
      });
    });
    await redis.admin.command(['CLIENT', 'KILL', 'ID', id]);
    const got = await again;
    expect(got.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['ok', 'ok']);
    for (const r of got) if (r.ok) r.permit.release();
  });
});
