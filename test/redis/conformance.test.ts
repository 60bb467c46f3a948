// The RateStore conformance suite from spillway/testing against the Redis store, over each
// client flavour: the machine's Redis for the ordinary cases, a private redis-server killed
// before the run for the "store is down" cases (one per failure policy).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { redisStore, type RedisStore } from '../../src/redis/index.js';
import { rateStoreConformance } from '../../src/testing/index.js';
import {
  cleanup,
  connect,
  flavours,
  PrivateRedis,
  redisServerMissing,
  sharedRedisMissing,
  uniquePrefix,
  type TestClient,
} from './helpers.js';

const missing = (await sharedRedisMissing()) ?? redisServerMissing();
if (missing !== undefined) console.warn(`skipping Redis conformance: ${missing}`);

describe.skipIf(missing !== undefined).each(flavours)('redisStore over %s conforms', (flavour) => {
  let up: TestClient;
  let down: TestClient;
  let server: PrivateRedis;
  let store: RedisStore;
  const prefix = uniquePrefix(`conf-${flavour}`);
  const downStore = (onError: 'open' | 'closed' | 'local', replicas = 1) =>
    redisStore({ client: down.client, prefix, timeoutMs: 50, onError, replicas });

  beforeAll(async () => {
    up = await connect(flavour);
    store = redisStore({ client: up.client, prefix, timeoutMs: 2_000, onError: 'closed' });
    server = await PrivateRedis.start();
    down = await connect(flavour, server.port);
    await server.kill();
  });
  afterAll(async () => {
    await cleanup(up, prefix);
    await Promise.all([up.close(), down.close()]);
    await server.stop();
  });

  const cases = rateStoreConformance({
    createStore: () => store,
    advance: (ms) => sleep(ms),
    toleranceMs: 200, // real time passes between calls on a busy machine
    namePrefix: flavour,
    unavailable: {
      open: () => downStore('open'),
      closed: () => downStore('closed'),
      local: { create: () => downStore('local', 3), replicas: 3 },
      answerWithinMs: 50 + 100,
    },
  });
  for (const c of cases) it(c.name, c.run);
});
