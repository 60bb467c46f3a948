// Needs: Redis on 127.0.0.1:6379 and redis-server installed; under `npm run test:valkey`, the
// Valkey that script starts and valkey-server installed.
// The Redis tests run against whichever server helpers.ts names (Redis, or Valkey under
// `npm run test:valkey`): this checks that the shared server and a private one are that
// server, so a Valkey run that quietly reached the machine's Redis fails here, not nowhere.
import { describe, expect, it } from 'vitest';
import {
  connect,
  PrivateRedis,
  redisServerMissing,
  sharedRedisMissing,
  underTest,
  type TestClient,
} from './helpers.js';

const missing = (await sharedRedisMissing()) ?? redisServerMissing();
if (missing !== undefined) console.warn(`skipping the server-under-test check: ${missing}`);

/** `valkey` or `redis`, from the server's own INFO. */
async function serverName(c: TestClient): Promise<string> {
  const info = String(await c.command(['INFO', 'server']));
  return /^server_name:(\w+)/m.exec(info)?.[1] ?? 'redis'; // Redis 7.0 has no server_name
}

describe.skipIf(missing !== undefined)(`the server under test (${underTest.name})`, () => {
  const expected = underTest.name.toLowerCase();

  it('the shared server is it', async () => {
    const c = await connect('ioredis6');
    try {
      expect(await serverName(c)).toBe(expected);
    } finally {
      await c.close();
    }
  });

  it('a private server is it too', async () => {
    const server = await PrivateRedis.start();
    try {
      const c = await connect('node-redis6', server.port);
      try {
        expect(await serverName(c)).toBe(expected);
      } finally {
        await c.close();
      }
    } finally {
      await server.stop();
    }
  });
});
