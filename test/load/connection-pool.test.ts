// The generator's connection pool against a real local server: paced warm-up, which idle
// connection goes out next (most recently used, or the reserve's oldest to keep it alive), a
// gentle sweep that never closes the reserve, and the budget of new connections.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Connection } from '../../src/load/connection.js';
import { ConnectionPool, type ConnectionPoolOptions } from '../../src/load/connection-pool.js';

let server: Server;
let accepted: Socket[];
let pools: ConnectionPool[];
let taken: Connection[];

beforeEach(async () => {
  accepted = [];
  pools = [];
  taken = [];
  server = createServer((socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterEach(async () => {
  for (const c of taken) c.destroy();
  for (const p of pools) p.close();
  for (const s of accepted) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

function pool(options: Partial<ConnectionPoolOptions> = {}): ConnectionPool {
  const p = new ConnectionPool({
    target: { host: '127.0.0.1', port: (server.address() as AddressInfo).port },
    maxConnections: 1000,
    reuse: true,
    idleTimeoutMs: 1000,
    reserve: 0,
    maxNewPerSec: Number.POSITIVE_INFINITY,
    connectBurst: Number.POSITIVE_INFINITY,
    listener: { onResponse: () => undefined, onFailure: () => undefined },
    ...options,
  });
  pools.push(p);
  return p;
}

function take(p: ConnectionPool, now: number, fresh = false): Connection {
  const c = p.acquire(now, fresh);
  if (typeof c === 'string') throw new Error(`no connection: ${c}`);
  taken.push(c);
  return c;
}

describe('ConnectionPool', () => {
  it('opens warm connections in paced chunks and keeps them idle', async () => {
    const p = pool();
    const started = performance.now();
    await p.warm(300, 5000, 0);
    expect(p.idle).toBe(300);
    expect(p.open).toBe(300);
    expect(p.opened).toBe(300);
    // Three chunks of at most 128, 10 ms apart.
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
    // The server accepts them on its own turn of the event loop, later on a busy machine (49 of
    // 300 after 50 ms once, at load average 17): wait for it, within a bound.
    const until = performance.now() + 5000;
    while (accepted.length < 300 && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(accepted).toHaveLength(300);
  });

  it('hands out the most recently used idle connection, the reserve’s oldest once it has idled half the idle timeout', async () => {
    const p = pool({ reserve: 3 });
    await p.warm(3, 5000, 0);
    const [c, b, a] = [take(p, 10), take(p, 10), take(p, 10)];
    p.release(a, 20);
    p.release(b, 30);
    p.release(c, 40);
    expect(take(p, 100)).toBe(c); // most recently used
    p.release(c, 100);
    expect(take(p, 519)).toBe(c); // `a` has idled 499 ms < 500
    p.release(c, 519);
    expect(take(p, 520)).toBe(a); // `a` has idled 500 ms: it goes out, so it stays open
    expect(take(p, 520)).toBe(c);
    expect(take(p, 530)).toBe(b); // idled 500 ms too
  });

  it('leaves connections beyond the reserve to age out: no refresh when more are idle than the reserve', async () => {
    const p = pool({ reserve: 1 });
    await p.warm(3, 5000, 0);
    const [c, b, a] = [take(p, 10), take(p, 10), take(p, 10)];
    p.release(a, 20);
    p.release(b, 30);
    p.release(c, 40);
    expect(take(p, 900)).toBe(c);
  });

  it('sweeps idle connections beyond the reserve, oldest first and at most 64 at a time', () => {
    const p = pool({ reserve: 2 });
    const all = Array.from({ length: 100 }, () => take(p, 0));
    for (const [i, c] of all.entries()) p.release(c, i); // idle since 0 … 99
    p.sweep(1000);
    expect(p.idle).toBe(100); // none has idled longer than 1000 ms yet
    p.sweep(1001);
    expect(p.idle).toBe(99); // the one idle since 0 has
    p.sweep(5000);
    expect(p.idle).toBe(35);
    p.sweep(5000);
    expect(p.idle).toBe(2); // the reserve stays
    p.sweep(50_000);
    expect(p.idle).toBe(2);
    // The two kept are the most recently used; the older of them goes out first, to stay alive.
    expect(take(p, 50_000)).toBe(all[98]);
    expect(take(p, 50_000)).toBe(all[99]);
  });

  it('opens new connections within the budget, then says so until it refills', () => {
    const p = pool({ maxNewPerSec: 10, connectBurst: 3, maxConnections: 6 });
    take(p, 0);
    take(p, 0);
    take(p, 0);
    expect(p.acquire(0)).toBe('connect rate');
    take(p, 100); // 10/s: one more after 100 ms
    expect(p.acquire(100)).toBe('connect rate');
    take(p, 100, true); // replacing a connection the server closed spends no budget
    take(p, 10_000);
    expect(p.acquire(10_000)).toBe('connection cap');
    expect(p.opened).toBe(6);
  });
});
