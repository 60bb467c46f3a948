// The concurrency-lease cycle both S7 benchmarks drive (bench/redis.js and
// diagnostics/redis-lease-cpu.js): acquire a lease on a key (limit 5, so never refused under
// their load) and release it, as each library lets a caller; and the sweep of a run's keys.
import { Semaphore } from 'redis-semaphore';

/** Contenders' names, Spillway's first. */
export const leaseContenders = ['spillway-lease', 'redis-semaphore'];

/**
 * `(key) => Promise<{ ok }>` for contender `name` on an ioredis `client`, its keys under
 * `prefix`; `redis` is the build's `spillway/redis` module; `maxBatchItems` the store's.
 */
export function leaseCycle(name, { client, prefix, redis, maxBatchItems = 16 }) {
  if (name === 'redis-semaphore') {
    return async (key) => {
      const s = new Semaphore(client, `${prefix}:${key}`, 5, { acquireAttemptsLimit: 1 });
      if (!(await s.tryAcquire())) return { ok: false };
      await s.release();
      return { ok: true };
    };
  }
  const store = redis.redisStore({
    client,
    prefix,
    onError: 'closed',
    timeoutMs: 1_000,
    maxBatchItems,
  });
  const limit = redis.redisConcurrencyLimit({ store, name: 'lease', limit: 5, maxQueue: 0 });
  return async (key) => {
    const r = await limit.acquire({ key });
    if (r.ok) r.permit.release();
    return r;
  };
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(client, prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}
