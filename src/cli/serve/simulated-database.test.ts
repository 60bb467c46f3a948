import { describe, expect, it } from 'vitest';
import { PoolExhaustedError, simulatedDatabase } from './simulated-database.js';

// These exercise real timers of a few ms: the simulated database is the reference servers'
// resource, built on setTimeout like the thing it stands in for.
describe('simulatedDatabase', () => {
  it('holds each connection for the service time; extra queries wait in FIFO order', async () => {
    const db = simulatedDatabase({ connections: 2, serviceMs: 5, maxWaiting: 10 });
    const order: number[] = [];
    const all = [0, 1, 2, 3].map((i) => db.query().then(() => order.push(i)));
    expect([db.busy, db.waiting]).toEqual([2, 2]);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3]);
    expect([db.busy, db.waiting, db.served]).toEqual([0, 0, 4]);
  });

  it('an aborted query frees its connection at once, and a full wait list refuses', async () => {
    const db = simulatedDatabase({ connections: 1, serviceMs: 10_000, maxWaiting: 1 });
    const controller = new AbortController();
    const first = db.query(controller.signal);
    const second = db.query();
    await expect(db.query()).rejects.toBeInstanceOf(PoolExhaustedError);
    controller.abort(new Error('caller gave up'));
    await expect(first).rejects.toThrow('caller gave up');
    expect(db.busy).toBe(1); // handed to the waiter
    expect(db.waiting).toBe(0);
    void second.catch(() => undefined);
  });
});
