// The generator against local node:http servers with known behaviour: the schedule is kept,
// latency runs from the intended send time, and every outcome is classified as BENCHMARKS.md
// defines it (including the socket being destroyed when the client's deadline passes).
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoad } from '../../src/load/index.js';
import { boundedHandler, startServer, startStallingServer, type TestServer } from './servers.js';

let servers: { close(): unknown }[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function serve(...args: Parameters<typeof startServer>): Promise<TestServer> {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}

describe('runLoad: the schedule', () => {
  it('offers the requested rate within 2 %, measured at the server', async () => {
    const server = await serve((_req, res) => setTimeout(() => res.end('ok'), 5));
    const result = await runLoad({ url: `${server.url}/`, ratePerSec: 800, durationMs: 3000 });
    expect(result.totals.offered).toBe(2400);
    expect(result.totals.ok).toBe(2400);
    // As the server saw it, leaving out the first and last 100 arrivals (start-up, drain).
    const a = server.arrivals;
    const seen = ((a.length - 201) / (a[a.length - 101]! - a[100]!)) * 1000;
    // Within 2 % when the generator kept its schedule. When it could not (a busy machine: a
    // run of the full suite once saw the server's rate 15 % off), it must say so, and such a
    // run is not quoted (BENCHMARKS.md rule 5): then the rate is not held to any bound here.
    if (result.validity.valid) expect(Math.abs(seen - 800) / 800).toBeLessThan(0.02);
    else expect(result.validity.reasons.length).toBeGreaterThan(0);
    expect(result.windows.slice(0, 3).map((w) => w.offered)).toEqual([800, 800, 800]);
    expect(result.totals.offeredPerSec).toBe(800);
    expect(result.totals.latencyMs.ok!.p50).toBeGreaterThanOrEqual(5);
  });

  it('poisson arrivals average the requested rate', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const result = await runLoad({
      url: server.url,
      ratePerSec: 1000,
      durationMs: 2000,
      arrival: 'poisson',
      seed: 5,
    });
    // 2,000 expected; a Poisson count has σ ≈ 45.
    expect(Math.abs(result.totals.offered - 2000)).toBeLessThan(150);
    expect(result.totals.ok).toBe(result.totals.offered);
  });

  it("counts time spent waiting to be sent: a stall in the generator's own loop is latency", async () => {
    const server = await serve((_req, res) => res.end('ok'));
    let stalled = false;
    const result = await runLoad({
      url: server.url,
      ratePerSec: 200,
      durationMs: 2500,
      onWindow: () => {
        if (stalled) return;
        stalled = true;
        const until = performance.now() + 300;
        while (performance.now() < until); // the generator cannot send for 300 ms
      },
    });
    const ok = result.totals.latencyMs.ok!;
    expect(ok.max).toBeGreaterThanOrEqual(290);
    expect(ok.p90).toBeGreaterThan(20); // ~60 of 500 requests waited behind the stall
    expect(result.totals.okFromSendMs!.p50).toBeLessThan(ok.p90); // the server was fast
    expect(result.validity.scheduleLagMs.max).toBeGreaterThanOrEqual(290);
    expect(result.validity.valid).toBe(false);
    expect(result.validity.reasons.join()).toMatch(/schedule lag p99/);
  });

  it('counts time a stalled server leaves requests unread, not just one slow reply per connection', async () => {
    const server = await startStallingServer({ stallAt: 200, stallMs: 400 });
    servers.push(server);
    const result = await runLoad({ url: server.url, ratePerSec: 200, durationMs: 2500 });
    const ok = result.totals.latencyMs.ok!;
    expect(result.totals.ok).toBe(500);
    // ~80 requests arrive during the stall; a closed-loop tool would see a handful.
    expect(ok.max).toBeGreaterThanOrEqual(350);
    expect(ok.p90).toBeGreaterThan(40);
    expect(ok.p50).toBeLessThan(ok.p90);
  });

  it('a server with known capacity: ok at capacity, the excess refused with 503', async () => {
    // 10 slots × 20 ms = 500 req/s, offered 1,000 req/s.
    const server = await serve(boundedHandler({ slots: 10, serviceMs: 20, queue: 0 }));
    const result = await runLoad({
      url: server.url,
      ratePerSec: 1000,
      durationMs: 2000,
      deadlineMs: 1000,
    });
    const { totals } = result;
    expect(totals.ok + totals.rejected).toBe(2000);
    // Never above capacity; below it only as far as a busy machine delays the server's timers.
    expect(totals.okPerSec).toBeGreaterThan(result.validity.valid ? 400 : 200);
    expect(totals.okPerSec).toBeLessThanOrEqual(520);
    expect(totals.rejectedByStatus).toEqual({ '503': totals.rejected });
    expect(totals.retryAfterMs!.p50).toBeCloseTo(1000, -1);
    expect(totals.latencyMs.rejected!.p50).toBeLessThan(totals.latencyMs.ok!.p50);
  });
});

describe('runLoad: outcomes', () => {
  it('classifies every outcome, one group per route', async () => {
    const server = await serve((req, res) => {
      switch (req.url) {
        case '/ok':
          return res.end('ok');
        case '/chunked':
          res.write('a');
          return setTimeout(() => res.end('b'), 2);
        case '/429':
          res.writeHead(429, { 'retry-after': '2' });
          return res.end();
        case '/503':
          res.writeHead(503);
          return res.end();
        case '/500':
          res.writeHead(500);
          return res.end();
        case '/404':
          res.writeHead(404);
          return res.end();
        case '/reset':
          return req.socket.destroy();
        default: // '/hang': never answers
          return;
      }
    });
    const paths = ['/ok', '/chunked', '/429', '/503', '/500', '/404', '/reset', '/hang'];
    const result = await runLoad({
      url: server.url,
      durationMs: 500,
      deadlineMs: 200,
      groups: paths.map((path) => ({ name: path.slice(1), path, ratePerSec: 20 })),
    });
    const by = Object.fromEntries(result.groups.map((g) => [g.name, g]));
    expect(by['ok']).toMatchObject({ offered: 10, ok: 10 });
    expect(by['chunked']).toMatchObject({ ok: 10 });
    expect(by['429']).toMatchObject({ rejected: 10, rejectedByStatus: { '429': 10 } });
    expect(by['429']!.retryAfterMs!.p50).toBeCloseTo(2000, -1);
    expect(by['503']).toMatchObject({ rejected: 10, rejectedWithoutRetryAfter: 10 });
    expect(by['500']).toMatchObject({ error: 10, errorsByStatus: { '500': 10 } });
    expect(by['404']).toMatchObject({ error: 10, errorsByStatus: { '404': 10 } });
    expect(by['reset']!.network).toBe(10);
    expect(by['hang']).toMatchObject({ timeout: 10, ok: 0 });
    // Never before the deadline (less the histogram's 0.1 % bucket width).
    expect(by['hang']!.latencyMs.timeout!.min).toBeGreaterThanOrEqual(199.7);
    // The deadline destroyed each socket: the server saw all ten clients go away.
    await new Promise((r) => setTimeout(r, 50));
    expect(server.abandoned.filter((url) => url === '/hang')).toHaveLength(10);
    const totals = result.totals;
    expect(totals.ok + totals.rejected + totals.error + totals.timeout + totals.network).toBe(80);
    expect(totals.latencyMs.ok!.count).toBe(20);
  });

  it('reads a body delimited by the server closing the connection (HTTP/1.0 style)', async () => {
    const raw = createServer((socket) => {
      socket.once('data', () =>
        socket.end('HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello'),
      );
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise((resolve) => raw.close(resolve)) });
    const { port } = raw.address() as { port: number };
    const result = await runLoad({
      url: `http://127.0.0.1:${port}/`,
      ratePerSec: 20,
      durationMs: 250,
    });
    expect(result.totals).toMatchObject({ ok: 5, network: 0 });
  });

  it('a connection that sends bytes after its answer is not reused', async () => {
    // Each answer is followed, a moment later, by bytes nobody asked for: a server out of step.
    const raw = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.on('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        setTimeout(() => socket.writable && socket.write('junk'), 5);
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise((resolve) => raw.close(resolve)) });
    const { port } = raw.address() as { port: number };
    const result = await runLoad({
      url: `http://127.0.0.1:${port}/`,
      ratePerSec: 20,
      durationMs: 500,
      warmConnections: 1,
    });
    // Every request is answered, each on a fresh connection: none that spoke out of turn is reused.
    expect(result.totals).toMatchObject({ offered: 10, ok: 10, error: 0, network: 0 });
    expect(result.connectionsOpened).toBeGreaterThanOrEqual(10);
  });

  it('network: a refused connection', async () => {
    // Port 1: outside the ephemeral range, so no server of this suite can be listening there.
    const port = 1;
    const result = await runLoad({
      url: `http://127.0.0.1:${port}/`,
      ratePerSec: 20,
      durationMs: 250,
    });
    expect(result.totals.network).toBe(5);
    expect(result.totals.networkByReason).toEqual({ ECONNREFUSED: 5 });
  });

  it('dropped: arrivals that find every connection busy are counted, not queued', async () => {
    const server = await serve(() => undefined); // never answers
    const result = await runLoad({
      url: server.url,
      ratePerSec: 100,
      durationMs: 500,
      deadlineMs: 300,
      maxConnections: 2,
    });
    expect(result.totals.offered).toBe(50);
    expect(result.totals.timeout + result.totals.dropped).toBe(50);
    expect(result.totals.dropped).toBeGreaterThanOrEqual(40);
    expect(result.peakConnections).toBeLessThanOrEqual(2);
    expect(result.totals.droppedByReason).toEqual({ 'connection cap': result.totals.dropped });
    expect(result.validity.valid).toBe(false);
    expect(result.validity.reasons.join()).toMatch(/requests dropped .*connection cap/);
  });

  it('connect rate: when no connection comes free, new ones open within the budget and the rest are dropped', async () => {
    const server = await serve(() => undefined); // never answers: every arrival needs a connection
    const result = await runLoad({
      url: server.url,
      ratePerSec: 500,
      durationMs: 1000,
      deadlineMs: 5000,
      drainMs: 100,
      warmConnections: 10,
      maxNewConnectionsPerSec: 50,
    });
    // 10 warm, a burst of 50, then 50/s for a second: about 110 sent, the rest dropped.
    expect(result.totals.offered).toBe(500);
    expect(result.connectionsOpened).toBeGreaterThanOrEqual(100);
    expect(result.connectionsOpened).toBeLessThanOrEqual(115);
    expect(result.totals.sent).toBe(result.connectionsOpened);
    expect(result.totals.droppedByReason).toEqual({ 'connect rate': 500 - result.totals.sent });
    expect(result.validity.reasons.join()).toMatch(/connect rate \(no idle connection/);
  });

  it("sends a stall's backlog in slices, reusing the connections its answers free", async () => {
    const server = await startStallingServer({ stallAt: Number.MAX_SAFE_INTEGER, stallMs: 0 });
    servers.push(server);
    let stalled = false;
    const result = await runLoad({
      url: server.url,
      ratePerSec: 2000,
      durationMs: 2000,
      warmConnections: 20,
      maxNewConnectionsPerSec: Infinity,
      onWindow: () => {
        if (stalled) return;
        stalled = true;
        const until = performance.now() + 300;
        while (performance.now() < until); // 600 arrivals fall due meanwhile
      },
    });
    // Every arrival of the backlog goes out and is answered. How many connections it took
    // depends on how fast the server in the other process answers between slices — about 300
    // on a quiet machine, over 1,000 on a loaded one — so it is not bounded here: the slicing
    // itself is tested in src/load/schedule.test.ts, its effect measured by bench/generator.js.
    expect(result.totals.ok).toBe(4000);
    expect(result.totals.dropped).toBe(0);
  });
});

describe('runLoad: connections', () => {
  it('keep-alive reuses a small pool; new-connection mode opens one per request', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const kept = await runLoad({ url: server.url, ratePerSec: 200, durationMs: 500 });
    expect(kept.totals.ok).toBe(100);
    expect(server.connections).toBeLessThanOrEqual(40);
    server.connections = 0;
    const fresh = await runLoad({
      url: server.url,
      ratePerSec: 200,
      durationMs: 500,
      connection: 'new',
    });
    expect(fresh.totals.ok).toBe(100);
    expect(server.connections).toBe(100);
  });

  it('keeps the warm reserve open at both ends for the whole run', async () => {
    let n = 0;
    // Slow at first, so every warm connection carries a request; fast from then on, so one
    // connection could carry them all and the rest would idle.
    const server = await serve((_req, res) => {
      if (++n <= 8) setTimeout(() => res.end('ok'), 150);
      else res.end('ok');
    });
    server.server.keepAliveTimeout = 1000; // the server closes connections idle for 1 s
    const result = await runLoad({
      url: server.url,
      ratePerSec: 40,
      durationMs: 3500,
      warmConnections: 6,
      idleTimeoutMs: 1200, // so the reserve's oldest goes out after idling 600 ms
    });
    expect(result.totals.ok).toBe(140);
    // One connection could carry every request after the start; the reserve stays in use just
    // enough that the server never closes it (a surplus connection opened at the start may age
    // out).
    const connections = result.windows.map((w) => w.connections);
    expect(connections.every((c) => c >= 6)).toBe(true);
    expect(result.staleReconnects).toBe(0);
  });

  it('re-sends once on a fresh connection when the server closed a pooled one', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    server.server.keepAliveTimeout = 100;
    const result = await runLoad({
      url: server.url,
      ratePerSec: 4,
      durationMs: 1000,
      warmConnections: 0,
      idleTimeoutMs: 10_000,
    });
    expect(result.totals.ok).toBe(4);
    expect(result.totals.network).toBe(0);
  });

  it('a warm-up sends at the same rate over the same connections and records none of it', async () => {
    let first: number | undefined;
    // The first 100 ms of answers are slow (a cold server): the warm-up absorbs them.
    const server = await serve((_req, res) => {
      first ??= performance.now();
      if (performance.now() - first < 100) setTimeout(() => res.end('ok'), 250);
      else res.end('ok');
    });
    const result = await runLoad({
      url: server.url,
      ratePerSec: 200,
      durationMs: 1000,
      warmupMs: 500,
    });
    expect(result.config.warmupMs).toBe(500);
    expect(result.totals.offered).toBe(200);
    expect(result.totals.ok).toBe(200);
    // Every measured arrival is in the first window. Answers still in flight when it closes
    // land in a second one that offers nothing (a loaded machine answers the last one late).
    const offered = result.windows.map((w) => w.offered);
    expect(offered[0]).toBe(200);
    expect(offered.slice(1).every((n) => n === 0)).toBe(true);
    expect(server.arrivals.length).toBe(300); // 100 warm-up requests, unrecorded
    expect(result.totals.latencyMs.ok!.max).toBeLessThan(200); // the slow start was warm-up
    // The measured requests used the connections the warm-up opened.
    expect(server.connections).toBeLessThanOrEqual(result.peakConnections);
  });

  it('groups with a fixed count or a later start do not take part in the warm-up', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const result = await runLoad({
      url: server.url,
      durationMs: 600,
      warmupMs: 400,
      groups: [
        { name: 'steady', ratePerSec: 100 },
        { name: 'canary', ratePerSec: 10, maxRequests: 3 },
        { name: 'late', ratePerSec: 50, startMs: 200 },
      ],
    });
    const sent = Object.fromEntries(result.groups.map((g) => [g.name, g.offered]));
    expect(sent).toEqual({ steady: 60, canary: 3, late: 20 });
    expect(server.arrivals.length).toBe(60 + 40 + 3 + 20);
  });
});

describe('runLoad: groups and retries', () => {
  it('runs several tenants at their own rates, headers and deadlines', async () => {
    const seen = new Map<string, number>();
    const clients = new Set<string>();
    const server = await serve((req, res) => {
      const tenant = String(req.headers['x-tenant']);
      seen.set(tenant, (seen.get(tenant) ?? 0) + 1);
      clients.add(String(req.headers['x-client']));
      if (tenant === 'slow') return void setTimeout(() => res.end('late'), 150);
      res.end('ok');
    });
    const result = await runLoad({
      url: server.url,
      durationMs: 1000,
      headers: { 'x-client': 'c-{client}' },
      groups: [
        { name: 'greedy', ratePerSec: 200, headers: { 'x-tenant': 'greedy' } },
        { name: 'polite', ratePerSec: 20, clients: 5, headers: { 'x-tenant': 'polite' } },
        { name: 'slow', ratePerSec: 10, deadlineMs: 100, headers: { 'x-tenant': 'slow' } },
      ],
    });
    expect(Object.fromEntries(seen)).toEqual({ greedy: 200, polite: 20, slow: 10 });
    expect([...clients].sort()).toEqual(['c-0', 'c-1', 'c-2', 'c-3', 'c-4']);
    const slow = result.groups.find((g) => g.name === 'slow')!;
    expect(slow.timeout).toBe(10);
    expect(result.totals.ok).toBe(220);
    expect(result.groups[0]!.windows[0]!.offered).toBe(200);
  });

  it('immediate retries: attempts are counted apart from requests', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(503);
      res.end();
    });
    const result = await runLoad({
      url: server.url,
      ratePerSec: 20,
      durationMs: 500,
      retry: { kind: 'immediate', retries: 2 },
    });
    expect(result.totals).toMatchObject({ offered: 10, rejected: 10, attempts: 30, retries: 20 });
    expect(result.totals.attemptOutcomes.rejected).toBe(30);
    expect(server.arrivals.length).toBe(30);
  });

  it('backoff retries wait for Retry-After, and the latency spans every attempt', async () => {
    const seen = new Set<string>();
    const server = await serve((req, res) => {
      const client = String(req.headers['x-client']);
      if (!seen.has(client)) {
        seen.add(client);
        res.writeHead(429, { 'retry-after': '1' });
        res.end();
        return;
      }
      res.end('ok');
    });
    const result = await runLoad({
      url: server.url,
      durationMs: 500,
      deadlineMs: 0,
      groups: [{ name: 'two', ratePerSec: 4, clients: 2, headers: { 'x-client': 'c{client}' } }],
      retry: { kind: 'backoff', retries: 1, baseMs: 10 },
    });
    expect(result.totals).toMatchObject({ offered: 2, ok: 2, attempts: 4, retries: 2 });
    expect(result.totals.latencyMs.ok!.min).toBeGreaterThanOrEqual(1000);
  });

  it('an abort stops the schedule early and still returns a result', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    const result = await runLoad({
      url: server.url,
      ratePerSec: 100,
      durationMs: 10_000,
      signal: controller.signal,
    });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(result.aborted).toBe(true);
    expect(result.totals.offered).toBeGreaterThan(20);
    expect(result.totals.offered).toBeLessThan(150); // 30 due at 300 ms; more if the abort runs late
    expect(result.totals.ok).toBe(result.totals.offered);
  });

  it('reports progress once per window', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const seen: number[] = [];
    await runLoad({
      url: server.url,
      ratePerSec: 50,
      durationMs: 2000,
      onWindow: ({ window, totals }) => seen.push(window.index, totals.offered),
    });
    expect(seen.slice(0, 4)).toEqual([0, 50, 1, 100]);
  });
});
