// Needs: Redis on 127.0.0.1:6379.
// Two guards — two "replicas" — over real sockets, sharing one Redis: a client that ignores
// 429s on one is refused on the other (whose own quota for it is untouched), as soon as the
// other has read the box's feed (every 100 ms here); an operator's suspension and lift on one
// reach the other; and key management on a quota kept in Redis is seen by both.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admission, type Admission, type EscalatedInfo } from '../../src/node/index.js';
import { redisPenaltyBox, redisStore, type RedisPenaltyBox } from '../../src/redis/index.js';
import { close, listen, send } from '../helpers/http.js';
import {
  cleanup,
  connect,
  eventually,
  sharedRedisMissing,
  uniquePrefix,
  type TestClient,
} from './helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping two-replica guard tests: ${missing}`);

describe.skipIf(missing !== undefined)('two guards sharing one Redis', () => {
  const prefix = uniquePrefix('replicas');
  const clients: TestClient[] = [];
  const servers: Server[] = [];
  const boxes: RedisPenaltyBox[] = [];
  const escalated: Record<string, EscalatedInfo[]> = { a: [], b: [] };
  const replicas: Record<string, { guard: Admission; port: number }> = {};

  beforeAll(async () => {
    for (const name of ['a', 'b']) {
      const c = await connect('ioredis6');
      clients.push(c);
      const store = redisStore({ client: c.client, prefix, timeoutMs: 2_000 });
      const box = redisPenaltyBox({
        store,
        threshold: 3,
        windowMs: 60_000,
        graceMs: 0,
        steps: [{ waitMs: 60_000 }, { waitMs: 120_000, block: true }],
        syncMs: 100,
      });
      boxes.push(box);
      const guard = admission({
        key: (req) => req.headers['x-client'] as string | undefined,
        penaltyBox: box,
        // Each replica's own quota, in its memory: one request per 100 s.
        quota: { ratePerSec: 0.01, burst: 1 },
        routes: [
          // A quota kept in Redis, shared by both.
          { match: '/shared', quota: { ratePerSec: 0.01, burst: 3, store, name: 'shared' } },
        ],
        onEscalated: (info) => escalated[name]!.push(info),
      });
      const server = createServer(guard.handle((_req, res) => void res.end('ok')));
      servers.push(server);
      replicas[name] = { guard, port: await listen(server) };
    }
    await Promise.all(boxes.map((box) => box.sync()));
  });
  afterAll(async () => {
    await Promise.all(servers.map(close));
    for (const box of boxes) box.close();
    await cleanup(clients[0]!, prefix);
    await Promise.all(clients.map((c) => c.close()));
  });

  const ask = async (replica: string, client: string, path = '/') => {
    const r = await send(replicas[replica]!.port, { path, headers: { 'x-client': client } });
    return r.status === 200 ? 'ok' : r.json<{ type: string }>().type.split(/[#:]/).pop()!;
  };

  it('a client escalated on one replica is refused on the other', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) seen.push(await ask('a', 'greedy'));
    // Told to wait 100 s, back three times at once: violations, sent to Redis, counted there.
    expect(seen).toEqual(['ok', ...Array<string>(4).fill('quota-exceeded')]);
    await eventually('a escalates', () => escalated['a']!.length > 0);
    expect(await ask('a', 'greedy')).toBe('abnormal-usage-detected');
    // b never saw it, and its own quota would admit it: the shared box refuses it there, once
    // b has read the feed (it does every 100 ms; waited for here, so b is not hammered).
    await boxes[1]!.sync();
    expect(await ask('b', 'greedy')).toBe('abnormal-usage-detected');
    expect(await ask('b', 'polite')).toBe('ok');
    expect(escalated['a']!.map((e) => [e.key, e.step])).toEqual([['greedy', 1]]);
    expect(escalated['b']).toEqual([]);
  });

  it('a suspension on one replica reaches the other, and so does its lift', async () => {
    expect(await ask('a', 'tenant')).toBe('ok');
    await replicas['b']!.guard.suspend('tenant');
    expect(await ask('b', 'tenant')).toBe('client-suspended');
    await eventually(
      'a suspends it',
      async () => (await ask('a', 'tenant')) === 'client-suspended',
    );
    await replicas['a']!.guard.lift('tenant');
    await eventually('b lifts it', async () => (await ask('b', 'tenant')) === 'ok');
  });

  it('key management on a quota in Redis is seen by both replicas', async () => {
    expect(await ask('a', 'c', '/shared')).toBe('ok');
    expect((await replicas['b']!.guard.quota('/shared')!.get('c'))[0]).toMatchObject({
      policy: 'shared',
      remaining: 2,
    });
    await replicas['b']!.guard.quota('/shared')!.penalize('c', 5);
    expect(await ask('a', 'c', '/shared')).toBe('quota-exceeded');
    await replicas['a']!.guard.quota('/shared')!.reset('c');
    expect(await ask('b', 'c', '/shared')).toBe('ok');
  });
});
