// Cancellation against real servers: when the deadline (or timeoutMs, or the caller) ends an
// attempt, the request is aborted and the server sees its socket close; the slot is held
// until the fetch has actually settled.
import type { Socket } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dependency, type FetchLike } from '../../src/client/index.js';
import { DeadlineExceededError, DependencyTimeoutError, deadline } from '../../src/index.js';
import { startServer, type TestServer } from './servers.js';

// Node's fetch loads undici on its first call, blocking the loop for tens of ms (hundreds on
// a busy machine): load it before a test's deadline starts counting.
beforeAll(async () => {
  await (await fetch('data:,warm')).text();
});

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * A server that accepts requests and never answers; `closed` resolves when a client socket
 * closes (watched from the connection, so it works even if the request is cancelled before
 * the server has parsed it).
 */
async function blackHole() {
  const s = await startServer(() => {});
  servers.push(s);
  return { s, closed: socketClosed(s) };
}

function socketClosed(s: TestServer): Promise<void> {
  return new Promise<void>((resolve) => {
    s.server.once('connection', (socket: Socket) => socket.once('close', () => resolve()));
  });
}

describe('cancellation', () => {
  it('the deadline aborts the request, and the server sees the socket close', async () => {
    const { s, closed } = await blackHole();
    const dep = dependency({ name: 'hole', baseUrl: s.url });
    const started = performance.now();
    const pending = dep.fetch('/', undefined, { deadline: 150 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(dep.active).toBe(1);
    await expect(pending).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    await closed; // the socket was released, not left to linger

    expect(dep.active).toBe(0);
    expect(s.seen.length).toBeLessThanOrEqual(1); // an expired deadline is never retried
  });

  it('a Deadline object cancels through its own signal, no extra timer', async () => {
    const { s, closed } = await blackHole();
    const dep = dependency({ name: 'hole', baseUrl: s.url });
    const d = deadline({ timeoutMs: 100 });
    try {
      await expect(dep.fetch('/', undefined, { deadline: d })).rejects.toBeInstanceOf(
        DeadlineExceededError,
      );
    } finally {
      d.dispose();
    }
    await closed;
    expect(dep.active).toBe(0);
    // The caller chose the deadline: its passing says nothing about the dependency.
    expect(dep.breaker!.toJSON()).toMatchObject({ window: { calls: 0, failures: 0 } });
  });

  it('timeoutMs aborts one attempt with DependencyTimeoutError, not retried', async () => {
    const { s, closed } = await blackHole();
    const dep = dependency({ name: 'hole', baseUrl: s.url, timeoutMs: 100 });
    const error = await dep.fetch('/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyTimeoutError);
    expect((error as DependencyTimeoutError).timeoutMs).toBe(100);
    await closed;
    expect(s.seen.length).toBeLessThanOrEqual(1);
    // The dependency's own time limit: the dependency was too slow, which counts against it.
    expect(dep.breaker!.toJSON()).toMatchObject({ window: { calls: 1, failures: 1 } });
  });

  it('the caller’s signal aborts with the caller’s reason', async () => {
    const { s, closed } = await blackHole();
    const dep = dependency({ name: 'hole', baseUrl: s.url, timeoutMs: 10_000 });
    const controller = new AbortController();
    const pending = dep.fetch('/', undefined, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 30));
    controller.abort(new Error('user went away'));
    await expect(pending).rejects.toThrow('user went away');
    await closed;
    expect(dep.active).toBe(0);
  });

  it('after the headers, the caller’s signal still cancels a stalled body', async () => {
    const s = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial'); // and never ends
    });
    servers.push(s);
    const closed = socketClosed(s);
    const dep = dependency({ name: 'slow-body', baseUrl: s.url });
    const controller = new AbortController();
    const res = await dep.fetch('/', { signal: controller.signal });
    expect(dep.active).toBe(0); // the slot is held until the response arrived, not the body
    const text = res.text();
    controller.abort(new Error('enough'));
    await expect(text).rejects.toThrow();
    await closed;
  });

  it('the slot is held until the fetch has actually settled, even if it settles late', async () => {
    const { s } = await blackHole();
    let settleLate: () => void = () => {};
    const lateFetch: FetchLike = (input, init) =>
      fetch(input, init).catch(async (error: unknown) => {
        // A fetch that takes a while to notice the abort.
        await new Promise<void>((resolve) => (settleLate = resolve));
        throw error;
      });
    const dep = dependency({
      name: 'late',
      baseUrl: s.url,
      fetch: lateFetch,
      limit: 1,
      maxQueue: 0,
    });
    const pending = dep.fetch('/', undefined, { deadline: 50 }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(dep.active).toBe(1); // the deadline passed, but the request has not settled yet
    expect(await dep.fetch('/').catch((e: unknown) => (e as { code: string }).code)).toBe(
      'SPILLWAY_E_QUEUE_FULL',
    );
    settleLate();
    expect(await pending).toBeInstanceOf(DeadlineExceededError);
    expect(dep.active).toBe(0);
  });
});
