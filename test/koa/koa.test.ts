// `spillway/koa` over real sockets on a virtual clock, on Koa 3 and Koa 2: admitted requests
// carry their context on ctx.state; quota, capacity and deadline refusals; the slot held until
// the work after the guard settles and the response ends, and freed when the client leaves;
// exempt paths; a route's own settings; a dependency's overload thrown downstream.
import { createServer, type Server } from 'node:http';
import { PassThrough } from 'node:stream';
import Koa from 'koa';
import Koa2 from 'koa2';
import { afterEach, describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../../src/index.js';
import type { AdmissionOptions, RequestContext } from '../../src/node/index.js';
import { spillway, type SpillwayState } from '../../src/koa/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, keepAliveAgent, listen, send, until } from '../helpers/http.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

async function start(App: typeof Koa, options: AdmissionOptions = {}) {
  const clock = createVirtualClock();
  const guard = spillway({ clock, penaltyBox: false, ...options });
  const gates: (() => void)[] = [];
  const seen: { status: number; context: RequestContext | undefined }[] = [];
  const work = { running: 0, stopped: [] as string[] };
  const app = new App<SpillwayState>();
  app.silent = true;
  // What a logger before the guard sees.
  app.use(async (ctx, next) => {
    await next();
    seen.push({ status: ctx.status, context: ctx.state.spillway });
  });
  app.use(guard);
  const limited = guard.route({ name: 'limited', quota: { ratePerSec: 1, burst: 1 } });
  app.use((ctx, next) =>
    ctx.path === '/limited' ? (limited(ctx, next) as Promise<void>) : next(),
  );
  app.use(async (ctx) => {
    const { signal, criticality, route } = ctx.state.spillway;
    switch (ctx.path) {
      case '/hold': {
        // Honours its signal; winding down takes a turn of the loop after the abort.
        work.running++;
        await new Promise<void>((resolve) => {
          gates.push(resolve);
          signal.addEventListener('abort', () => resolve());
        });
        await new Promise((r) => setImmediate(r));
        work.running--;
        work.stopped.push(signal.aborted ? String((signal.reason as Error).name) : 'done');
        ctx.body = 'held';
        return;
      }
      case '/stubborn': {
        // Ignores its signal: the slot stays taken until it is done.
        work.running++;
        await new Promise<void>((resolve) => gates.push(resolve));
        work.running--;
        ctx.body = 'late';
        return;
      }
      case '/stream': {
        const body = new PassThrough();
        body.write('first ');
        gates.push(() => body.end('last'));
        ctx.body = body;
        return;
      }
      case '/dep':
        throw new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 4_000 });
      case '/bug':
        throw new Error('a bug, not overload');
      default:
        ctx.body = `${route} ${criticality} ${ctx.state.spillway.remainingMs()}`;
    }
  });
  const handle = app.callback();
  const server = createServer((req, res) => void handle(req, res));
  servers.push(server);
  const port = await listen(server);
  return {
    clock,
    port,
    work,
    seen,
    guard,
    active: (route?: string) => guard.admission.stats(route)?.active,
    release: () => gates.splice(0).forEach((f) => f()),
  };
}

describe.each([
  ['Koa 3', Koa],
  ['Koa 2', Koa2],
])('spillway/koa on %s', (_name, App) => {
  it('lets a request through with its context on ctx.state, and frees the slot after', async () => {
    const s = await start(App, { deadlineMs: 5_000 });
    const answer = await send(s.port, {
      path: '/plain',
      headers: { 'spillway-criticality': 'sheddable-plus', 'spillway-deadline': '800' },
    });
    expect([answer.status, answer.body]).toEqual([200, 'default sheddable-plus 800']);
    await until(() => s.guard.admission.inflight === 0);
    expect(s.active()).toBe(0);
    expect(s.seen[0]!.status).toBe(200);
  });

  it('answers over its quota with 429, and the middleware before it sees the status', async () => {
    const s = await start(App, { quota: { ratePerSec: 1, burst: 1, name: 'api' } });
    expect((await send(s.port, { path: '/plain' })).status).toBe(200);
    const refused = await send(s.port, { path: '/plain' });
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-policy']).toBe('"api";q=1;w=1');
    expect(refused.headers['content-length']).toBe(String(Buffer.byteLength(refused.body)));
    expect(refused.json()).toMatchObject({ status: 429 });
    expect(s.seen.map((x) => x.status)).toEqual([200, 429]);
    expect(s.seen[1]!.context).toBeUndefined();
  });

  it('answers past capacity with 503, and a spent deadline with 503 never', async () => {
    const s = await start(App, { limit: 1, maxQueue: 0 });
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
    const s = await start(App, { limit: 1 });
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
    const s = await start(App, { limit: 1 });
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
    const s = await start(App, { limit: 1 });
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

  it('a streamed body holds the slot until it has been written, or the client has gone', async () => {
    const s = await start(App, { limit: 1 });
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
    const s = await start(App, {
      limit: 1,
      maxQueue: 0,
      routes: [{ match: '/free/*', exempt: true }],
    });
    const holding = send(s.port, { path: '/hold' });
    await until(() => s.work.running === 1);
    expect((await send(s.port, { path: '/healthz' })).body).toMatch(/^exempt critical/);
    expect((await send(s.port, { path: '/free/a' })).body).toMatch(/^exempt critical/);
    expect((await send(s.port, { path: '/plain' })).status).toBe(503);
    s.release();
    await holding;
  });

  it('guard.route gives a route its own settings', async () => {
    const s = await start(App);
    expect((await send(s.port, { path: '/limited' })).body).toMatch(/^limited /);
    const refused = await send(s.port, { path: '/limited' });
    expect([refused.status, refused.headers['ratelimit-policy']]).toEqual([
      429,
      '"limited";q=1;w=1',
    ]);
    expect((await send(s.port, { path: '/plain' })).status).toBe(200);
    expect(s.active('limited')).toBe(0);
  });

  it("a dependency's overload becomes its refusal; a bug is left to Koa", async () => {
    const s = await start(App);
    const dep = await send(s.port, { path: '/dep' });
    expect([dep.status, dep.headers['spillway-retry'], dep.headers['retry-after']]).toEqual([
      503,
      'later',
      '4',
    ]);
    expect(dep.json()).toMatchObject({ type: 'urn:spillway:problem:dependency-overloaded' });
    const bug = await send(s.port, { path: '/bug' });
    expect([bug.status, bug.headers['content-type']]).toEqual([500, 'text/plain; charset=utf-8']);
    expect(s.seen.map((x) => x.status)).toEqual([503]);
    expect(s.guard.admission.inflight).toBe(0);
  });
});
