// The RateStore conformance suite from spillway/testing against the Redis store, for one
// client: registered inside a describe by each target (a single Redis over each client
// flavour, a Redis Cluster over each cluster client), so every target runs the same cases.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, it } from 'vitest';
import { redisStore, type RedisStore } from '../../src/redis/index.js';
import { rateStoreConformance } from '../../src/testing/index.js';
import { cleanup, uniquePrefix, type TestClient } from './helpers.js';

/** A client whose server has gone away, and how to dispose of both. */
export interface DownClient {
  readonly client: TestClient;
  stop(): Promise<void>;
}

/** What the suite runs against. */
export interface ConformanceTarget {
  /** Names the cases and the keys' prefix. */
  readonly label: string;
  /** A connected client; the suite closes it. */
  up(): Promise<TestClient>;
  /** A client that was connected and whose server is now gone (the "store is down" cases). */
  down(): Promise<DownClient>;
  /** Delete the suite's keys after (the shared Redis); a private server goes away anyway. */
  readonly cleanup: boolean;
}

/** Registers the conformance cases for `target` in the enclosing describe. */
export function redisStoreConformance(target: ConformanceTarget): void {
  let up: TestClient;
  let down: DownClient;
  let store: RedisStore;
  const prefix = uniquePrefix(`conf-${target.label.replaceAll(' ', '-')}`);
  const downStore = (onError: 'open' | 'closed' | 'local', replicas = 1) =>
    redisStore({ client: down.client.client, prefix, timeoutMs: 50, onError, replicas });

  beforeAll(async () => {
    up = await target.up();
    store = redisStore({ client: up.client, prefix, timeoutMs: 2_000, onError: 'closed' });
    down = await target.down();
  });
  afterAll(async () => {
    if (target.cleanup && up !== undefined) await cleanup(up, prefix);
    await Promise.all([up?.close(), down?.stop()]);
  });

  const cases = rateStoreConformance({
    createStore: () => store,
    advance: (ms) => sleep(ms),
    toleranceMs: 200, // real time passes between calls on a busy machine
    namePrefix: target.label.replaceAll(' ', '-'),
    unavailable: {
      open: () => downStore('open'),
      closed: () => downStore('closed'),
      local: { create: () => downStore('local', 3), replicas: 3 },
      answerWithinMs: 50 + 100,
    },
  });
  for (const c of cases) it(c.name, c.run);
}
