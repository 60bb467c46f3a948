// `spillway/hono` over real sockets (Hono 4 on @hono/node-server) on a virtual clock: admitted
// requests carry their context in c.var; quota, capacity and deadline refusals as Web Responses
// that keep the fields set before the guard; the slot held until the work after the guard
// settles and the response ends, and freed when the client leaves; exempt paths; a route's own
// settings; a dependency's overload thrown downstream.
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { afterEach, describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../../src/index.js';
import type { AdmissionOptions } from '../../src/node/index.js';
import { spillway, type SpillwayEnv } from '../../src/hono/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, keepAliveAgent, listen, send, until } from '../helpers/http.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

async function start(options: AdmissionOptions = {}) {
  const clock = createVirtualClock();
  const guard = spillway({ clock, penaltyBox: false, ...options });
  const gates: (() => void)[] = [];
  const seen: number[] = [];
  const errors: unknown[] = [];
  const work = { running: 0, stopped: [] as string[] };
  const app = new Hono<SpillwayEnv>();
  // What a logger and a CORS middleware before the guard do.
  app.use(async (c, next) => {
    c.header('access-control-allow-origin', '*');
    await next();
    seen.push(c.res.status);
  });
  app.use(guard);
  app.onError((error, c) => {
    errors.push(error);
    return c.text('Internal Server Error', 500);
  });
  const hold = async (signal: AbortSignal, honour: boolean) => {
    work.running++;
    await new Promise<void>((resolve) => {
      gates.push(resolve);
      if (honour) signal.addEventListener('abort', () => resolve());
    });
    // Winding down takes a turn of the loop after the abort.
    await new Promise((r) => setImmediate(r));
    work.running--;
    work.stopped.push(signal.aborted ? String((signal.reason as Error).name) : 'done');
  };
  app.get('/hold', async (c) => {
    await hold(c.var.spillway.signal, true);
    return c.text('held');
  });
  app.get('/stubborn', async (c) => {
    await hold(c.var.spillway.signal, false);
    return c.text('late');
  });
  app.get('/stream', (c) =>
    stream(c, async (s) => {
      await s.write('first ');
      await new Promise<void>((resolve) => {
        gates.push(resolve);
        s.onAbort(resolve);
      });
      await s.write('last');
    }),
  );
  app.get('/dep', () => {
    throw new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 4_000 });
  });
  app.get('/bug', () => {
    throw new Error('a bug, not overload');
  });
  app.get('/limited', guard.route({ name: 'limited', quota: { ratePerSec: 1, burst: 1 } }), (c) =>
    c.text(`${c.var.spillway.route}`),
  );
  app.get('*', (c) => {
    const { route, criticality, remainingMs } = c.get('spillway');
    return c.text(`${route} ${criticality} ${remainingMs()}`);
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  servers.push(server);
  const port = await listen(server);
  return {
    clock,
    port,
    work,
    seen,
    errors,
    guard,
    active: (route?: string) => guard.admission.stats(route)?.active,
    release: () => gates.splice(0).forEach((f) => f()),
  };
}

describe('spillway/hono', () => {
  it('lets a request through with its context in c.var, and frees the slot after', async () => {
    const s = await start({ deadlineMs: 5_000 });
    const answer = await send(s.port, {
      path: '/plain',
      headers: { 'spillway-criticality': 'sheddable-plus', 'spillway-deadline': '800' },
    });
    expect([answer.status, answer.body]).toEqual([200, 'default sheddable-plus 800']);
    await until(() => s.guard.admission.inflight === 0);
    expect(s.active()).toBe(0);
  });

  it('answers over its quota with 429, keeping the fields set before the guard', async () => {
    const s = await start({ quota: { ratePerSec: 1, burst: 1, name: 'api' } });
    expect((await send(s.port, { path: '/plain' })).status).toBe(200);
    const refused = await send(s.port, { path: '/plain' });
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-policy']).toBe('"api";q=1;w=1');
    expect(refused.headers['content-length']).toBe(String(Buffer.byteLength(refused.body)));
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    expect(refused.json()).toMatchObject({ status: 429 });
    expect(s.seen).toEqual([200, 429]);
  });

  it('answers past capacity with 503, and a spent deadline with 503 never', async () => {
    const s = await start({ limit: 1, maxQueue: 0 });
    const holding = send(s.port, { path: '/hold' });
    await until(() => s.work.running === 1);
    const refused = await send(s.port, { path: '/plain' });
    expect([refused.status, refused.headers['spillway-retry']]).toEqual([503, 'later']);
    const spent = await send(s.port, { path: '/plain', headers: { 'spillway-deadline': '0' } });
    expect([spent.status, spent.headers['spillway-retry']]).toEqual([503, 'never']);
    s.release();
    expect((await holding).body).toBe('held');
    await until(() => s.active() === 0);
  });

  it('aborts the signal at the deadline, and frees the slot once the work has stopped', async () => {
    const s = await start({ limit: 1 });
    const pending = send(s.port, { path: '/hold', headers: { 'spillway-deadline': '100' } });
    await until(() => s.work.running === 1);
    await s.clock.advance(99);
    expect(s.work.stopped).toEqual([]);
    await s.clock.advance(1);
    expect((await pending).status).toBe(200);
    expect(s.work.stopped).toEqual(['DeadlineExceededError']);
    await until(() => s.active() === 0);
  });

  it('a client that leaves aborts the signal; the slot is freed when the work has stopped', async () => {
    const s = await start({ limit: 1 });
    const controller = new AbortController();
    const pending = send(s.port, { path: '/hold', signal: controller.signal }).catch(() => 'gone');
    await until(() => s.work.running === 1);
    controller.abort();
    expect(await pending).toBe('gone');
    await until(() => s.work.stopped.length === 1);
    expect(s.work.stopped).toEqual(['AbortError']);
    await until(() => s.active() === 0);
    expect(s.guard.admission.inflight).toBe(0);
  });

  it('work that ignores a departed client holds the slot until it is done', async () => {
    const s = await start({ limit: 1 });
    const controller = new AbortController();
    const pending = send(s.port, { path: '/stubborn', signal: controller.signal }).catch(
      () => 'gone',
    );
    await until(() => s.work.running === 1);
    controller.abort();
    expect(await pending).toBe('gone');
    await new Promise((r) => setTimeout(r, 20));
    expect(s.active()).toBe(1);
    s.release();
    await until(() => s.active() === 0);
  });

  it('a streamed response holds the slot until it has been written, or the client has gone', async () => {
    const s = await start({ limit: 1 });
    const agent = keepAliveAgent();
    const streamed = send(s.port, { path: '/stream', agent });
    await until(() => s.active() === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(s.active()).toBe(1);
    s.release();
    expect((await streamed).body).toBe('first last');
    await until(() => s.active() === 0);
    agent.destroy();
    const controller = new AbortController();
    const left = send(s.port, { path: '/stream', signal: controller.signal }).catch(() => 'gone');
    await until(() => s.active() === 1);
    controller.abort();
    expect(await left).toBe('gone');
    await until(() => s.active() === 0);
  });

  it('exempt paths pass a saturated guard with a context of their own', async () => {
    const s = await start({ limit: 1, maxQueue: 0, routes: [{ match: '/free/*', exempt: true }] });
    const holding = send(s.port, { path: '/hold' });
    await until(() => s.work.running === 1);
    expect((await send(s.port, { path: '/healthz' })).body).toMatch(/^exempt critical/);
    expect((await send(s.port, { path: '/free/a' })).body).toMatch(/^exempt critical/);
    expect((await send(s.port, { path: '/plain' })).status).toBe(503);
    s.release();
    await holding;
  });

  it('guard.route gives a route its own settings', async () => {
    // The route's guard alone: the app-wide one lets everything through.
    const s = await start({ exempt: ['/limited'] });
    expect((await send(s.port, { path: '/limited' })).body).toBe('limited');
    const refused = await send(s.port, { path: '/limited' });
    expect([refused.status, refused.headers['ratelimit-policy']]).toEqual([
      429,
      '"limited";q=1;w=1',
    ]);
    expect((await send(s.port, { path: '/plain' })).status).toBe(200);
    expect(s.active('limited')).toBe(0);
  });

  it("a dependency's overload becomes its refusal; a bug keeps onError's answer", async () => {
    const s = await start();
    const dep = await send(s.port, { path: '/dep' });
    expect([dep.status, dep.headers['spillway-retry'], dep.headers['retry-after']]).toEqual([
      503,
      'later',
      '4',
    ]);
    expect(dep.json()).toMatchObject({ type: 'urn:spillway:problem:dependency-overloaded' });
    expect(dep.headers['content-type']).toBe('application/problem+json');
    const bug = await send(s.port, { path: '/bug' });
    expect([bug.status, bug.body]).toEqual([500, 'Internal Server Error']);
    expect(s.seen).toEqual([503, 500]);
    expect(s.errors).toHaveLength(2);
    expect(s.guard.admission.inflight).toBe(0);
  });

  it('says what it needs when the app is not served by @hono/node-server', async () => {
    const app = new Hono<SpillwayEnv>();
    app.use(spillway({ clock: createVirtualClock() }));
    let thrown: unknown;
    app.onError((error, c) => ((thrown = error), c.text('no', 500)));
    app.get('*', (c) => c.text('ok'));
    expect((await app.request('/x')).status).toBe(500);
    expect(String(thrown)).toMatch(/@hono\/node-server: c\.env\.incoming is missing/);
  });
});
