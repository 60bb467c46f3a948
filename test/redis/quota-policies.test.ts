// Needs: Redis on 127.0.0.1:6379.
// A route's quota with policies in Redis, through the node:http guard over real sockets: a
// memory policy beside a Redis one (the Redis one asked only once the memory one admits, and
// the memory token given back when Redis refuses), and two Redis policies where the one that
// admitted a refused request gets its token back through the store's adjust.
import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admission, type AdmissionOptions } from '../../src/node/index.js';
import { redisStore, type RedisStore } from '../../src/redis/index.js';
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
if (missing !== undefined) console.warn(`skipping Redis quota-policy tests: ${missing}`);

describe.skipIf(missing !== undefined)('quota policies in Redis, through the guard', () => {
  let c: TestClient;
  let store: RedisStore;
  const prefix = uniquePrefix('quota-policies');
  const servers: Server[] = [];
  beforeAll(async () => {
    c = await connect('ioredis6');
    store = redisStore({ client: c.client, prefix, timeoutMs: 2_000, onError: 'closed' });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(close));
  });
  afterAll(async () => {
    await cleanup(c, prefix);
    await c.close();
  });

  async function guarded(options: AdmissionOptions) {
    const guard = admission({ penaltyBox: false, ...options });
    const server = createServer(guard.handle((_req, res) => void res.end('ok')));
    servers.push(server);
    const port = await listen(server);
    return (key: string) => send(port, { headers: { 'x-key': key } });
  }
  const key = (req: { headers: Record<string, unknown> }) => req.headers['x-key'] as string;

  it('a memory policy beside a Redis one: Redis refuses, the memory token comes back', async () => {
    const ask = await guarded({
      key,
      quota: [
        { name: 'local', ratePerSec: 100, burst: 100 },
        { name: 'minute', perWindow: 2, windowMs: 60_000, store },
      ],
    });
    const first = await ask('a');
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"local";q=100;w=1, "minute";q=2;w=60');
    expect(first.headers['ratelimit']).toMatch(/^"local";r=99;t=1, "minute";r=1;t=\d+$/);
    expect((await ask('a')).status).toBe(200);
    const refused = await ask('a');
    expect(refused.status).toBe(429);
    expect(refused.json()).toMatchObject({ 'violated-policies': ['minute'] });
    // About 30 s: the next of 2 per minute.
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(30);
    // The local bucket shows the two admitted requests only (refills at 100/s meanwhile).
    expect(refused.headers['ratelimit']).toMatch(/^"local";r=(98|99|100);t=\d+, "minute";r=0;/);
  });

  it('two Redis policies: the one that admitted a refused request gets its token back', async () => {
    const ask = await guarded({
      key,
      quota: {
        store,
        policies: [
          { name: 'roomy', perWindow: 10, windowMs: 60_000 },
          { name: 'tight', perWindow: 1, windowMs: 60_000 },
        ],
      },
    });
    expect((await ask('b')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await ask('b')).status).toBe(429);
    const roomy = { name: 'roomy', ratePerSec: 10 / 60, burst: 10 };
    // The refunds are calls of their own: each lands shortly after its refusal.
    await eventually('roomy back to 9', async () => (await store.peek('b', roomy)).remaining === 9);
  });
});
