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

  it('a query may ask for its own service time (a slow one) without changing the others', async () => {
    const db = simulatedDatabase({ connections: 1, serviceMs: 10_000, maxWaiting: 1 });
    await db.query(undefined, 5);
    expect([db.busy, db.served, db.serviceMs]).toEqual([0, 1, 10_000]);
    // And a slow query waits to the end of its own time, not the pool's: still held at 20 ms.
    const slow = simulatedDatabase({ connections: 1, serviceMs: 1, maxWaiting: 1 });
    const controller = new AbortController();
    let done = false;
    const held = slow.query(controller.signal, 10_000).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([done, slow.busy]).toEqual([false, 1]);
    controller.abort(new Error('caller gave up'));
    await expect(held).rejects.toThrow('caller gave up');
  });
});
