import { describe, expect, it } from 'vitest';
import { simulatedDatabase } from './simulated-database.js';
import { referenceQuery } from './slow-path.js';

// Real timers of a few ms, as the simulated database's own tests.
describe('referenceQuery', () => {
  const db = () => simulatedDatabase({ connections: 2_000, serviceMs: 1, maxWaiting: 0 });
  const slow = (client: string) => ({ url: '/slow', headers: { 'x-client-id': client } });

  it('counts per client the most slow queries at once, and only those on the slow path', async () => {
    const query = referenceQuery(db(), 5);
    await Promise.all([query(undefined, slow('a')), query(undefined, slow('a'))]);
    await query(undefined, slow('a'));
    await Promise.all([
      query(undefined, slow('b')),
      query(undefined, { url: '/work', headers: {} }),
    ]);
    expect(query.slowStats()).toEqual({
      slowMs: 5,
      inFlight: 0,
      peakByClient: { a: 2, b: 1 },
      untracked: 0,
    });
    expect(referenceQuery(db(), undefined).slowStats()).toBeUndefined();
  });

  it('keeps the peaks of 1,024 clients and counts the slow requests of any more', async () => {
    const query = referenceQuery(db(), 1);
    await Promise.all(Array.from({ length: 1_030 }, (_, i) => query(undefined, slow(`c${i}`))));
    await query(undefined, slow('c0')); // a client already kept is still counted
    const stats = query.slowStats()!;
    expect(Object.keys(stats.peakByClient)).toHaveLength(1_024);
    expect(stats.untracked).toBe(6);
    expect(stats.inFlight).toBe(0);
  });
});
