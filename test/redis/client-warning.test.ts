// A client that queues commands while disconnected, or re-sends unanswered ones after a
// reconnect, sends commands the store already gave up on: the store says so once per client
// with a process warning (code SPILLWAY_W_REDIS_RESEND). Clients configured to fail fast, as
// docs/redis.md asks, get no warning. No connection is needed: the options are read at once.
import { setImmediate as tick } from 'node:timers/promises';
import { Redis as Ioredis6 } from 'ioredis';
import { Redis as Ioredis5 } from 'ioredis5';
import { createClient as createNodeRedis6 } from 'redis';
import { createClient as createNodeRedis5 } from 'redis5';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redisStore, type RedisClientLike } from '../../src/redis/index.js';

const code = 'SPILLWAY_W_REDIS_RESEND';
let seen: Error[] = [];
const listener = (w: Error): void => {
  seen.push(w);
};
beforeEach(() => {
  seen = [];
  process.on('warning', listener);
});
afterEach(() => {
  process.off('warning', listener);
});

/** Warnings with our code after `fn` made its stores. */
async function warningsFrom(fn: () => void): Promise<Error[]> {
  fn();
  await tick();
  return seen.filter((w) => (w as { code?: string }).code === code);
}

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

function ioredis(major: 5 | 6, options: Record<string, unknown>): RedisClientLike {
  const c =
    major === 6
      ? new Ioredis6({ lazyConnect: true, ...options })
      : new Ioredis5({ lazyConnect: true, ...options });
  closers.push(() => c.disconnect());
  return c;
}

const nodeRedis = (major: 5 | 6, options: Record<string, unknown>): RedisClientLike =>
  major === 6 ? createNodeRedis6(options) : createNodeRedis5(options);

describe.each([5, 6] as const)('ioredis %s', (major) => {
  it('warns once per client with its defaults, naming the options', async () => {
    const client = ioredis(major, {});
    const got = await warningsFrom(() => {
      redisStore({ client });
      redisStore({ client, prefix: 'other' });
    });
    expect(got).toHaveLength(1);
    expect(got[0]!.message).toMatch(/offline queue on \(enableOfflineQueue\)/);
    expect(got[0]!.message).toMatch(/re-sending on \(autoResendUnfulfilledCommands\)/);
  });

  it('warns about re-sending alone when only the offline queue is off', async () => {
    const client = ioredis(major, { enableOfflineQueue: false });
    const got = await warningsFrom(() => redisStore({ client }));
    expect(got).toHaveLength(1);
    expect(got[0]!.message).not.toMatch(/offline queue on/);
    expect(got[0]!.message).toMatch(/re-sending on \(autoResendUnfulfilledCommands\)/);
  });

  it('does not warn when configured to fail fast', async () => {
    // maxRetriesPerRequest: 0 rejects unanswered commands when the connection closes, so
    // nothing is left to re-send; so does autoResendUnfulfilledCommands: false.
    const a = ioredis(major, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    const b = ioredis(major, { enableOfflineQueue: false, autoResendUnfulfilledCommands: false });
    expect(await warningsFrom(() => [a, b].forEach((client) => redisStore({ client })))).toEqual(
      [],
    );
  });
});

describe.each([5, 6] as const)('node-redis %s', (major) => {
  it('warns once per client with its offline queue on (the default)', async () => {
    const client = nodeRedis(major, {});
    const got = await warningsFrom(() => {
      redisStore({ client });
      redisStore({ client });
    });
    expect(got).toHaveLength(1);
    expect(got[0]!.message).toMatch(/offline queue on \(disableOfflineQueue\)/);
  });

  it('does not warn with disableOfflineQueue: true', async () => {
    const client = nodeRedis(major, { disableOfflineQueue: true });
    expect(await warningsFrom(() => redisStore({ client }))).toEqual([]);
  });
});
