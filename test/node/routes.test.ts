// Per-route settings of the node:http guard (`routes`): exact paths, prefixes, RegExps,
// functions of the request, methods and exempt routes, each with its own limit, line, quota and
// deadline — over real sockets on port 0, on a virtual clock.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { SpillwayConfigError } from '../../src/index.js';
import { admission, type AdmissionOptions, type AdmittedHandler } from '../../src/node/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, listen, send, until } from '../helpers/http.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

/** Paths under /hold/ wait until released; everything else answers at once with its route. */
function holding() {
  const open: (() => void)[] = [];
  const handler: AdmittedHandler = async (req, res, ctx) => {
    if (req.url?.startsWith('/hold/') === true || req.url?.startsWith('/api/hold') === true) {
      await new Promise<void>((resolve) => {
        open.push(resolve);
        ctx.signal.addEventListener('abort', () => resolve());
      });
    }
    if (!res.destroyed) res.end(JSON.stringify({ route: ctx.route, deadline: ctx.remainingMs() }));
  };
  return { handler, open, releaseAll: () => open.splice(0).forEach((f) => f()) };
}

async function start(options: AdmissionOptions, handler: AdmittedHandler) {
  const guard = admission({ clock: createVirtualClock(), penaltyBox: false, ...options });
  const server = createServer(guard.handle(handler));
  servers.push(server);
  return { guard, port: await listen(server) };
}

describe('admission routes', () => {
  it('resolves exact paths, prefixes, RegExps, functions and methods, in that order', async () => {
    const { handler } = holding();
    const { port } = await start(
      {
        routes: [
          { match: '/orders', method: 'POST', name: 'create-order' },
          { match: '/orders', name: 'orders' },
          { match: '/api/*', name: 'api' },
          { match: /^\/items\/\d+$/, name: 'item' },
          { match: (req) => req.headers['x-tenant'] === 'big', name: 'big-tenant' },
        ],
      },
      handler,
    );
    const route = async (
      path: string,
      init: { method?: string; headers?: Record<string, string> } = {},
    ) => (await send(port, { path, ...init })).json<{ route: string }>().route;
    expect(await route('/orders', { method: 'POST' })).toBe('create-order');
    expect(await route('/orders')).toBe('orders');
    expect(await route('/orders?page=2')).toBe('orders');
    expect(await route('/api/v1/users')).toBe('api');
    expect(await route('/items/42')).toBe('item');
    expect(await route('/items/abc')).toBe('default');
    expect(await route('/other', { headers: { 'x-tenant': 'big' } })).toBe('big-tenant');
    // An exact path wins over a function that also matches.
    expect(await route('/orders', { headers: { 'x-tenant': 'big' } })).toBe('orders');
    expect(await route('/other')).toBe('default');
  });

  it('gives each route its own limit and line: a saturated route leaves the others alone', async () => {
    const { handler, open, releaseAll } = holding();
    const { guard, port } = await start(
      {
        limit: 10,
        routes: [{ match: '/hold/*', name: 'slow', limit: 1, maxQueue: 0 }],
      },
      handler,
    );
    const first = send(port, { path: '/hold/1' });
    await until(() => open.length === 1);
    const refused = await send(port, { path: '/hold/2' });
    expect(refused.status).toBe(503);
    expect(refused.json()).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
    });
    expect(guard.stats('slow')).toEqual({ active: 1, queued: 0, limit: 1 });
    // The default route still has all ten of its slots.
    expect((await send(port, { path: '/fast' })).status).toBe(200);
    expect(guard.stats()).toMatchObject({ active: 0, limit: 10 });
    releaseAll();
    expect((await first).status).toBe(200);
  });

  it('gives each route its own quota, named after the route unless it says', async () => {
    const { handler } = holding();
    const { port } = await start(
      {
        routes: [
          { match: '/search', quota: { ratePerSec: 1, burst: 1 } },
          { match: '/export', quota: { ratePerSec: 1, burst: 2, name: 'exports' } },
        ],
      },
      handler,
    );
    expect((await send(port, { path: '/search' })).status).toBe(200);
    const search = await send(port, { path: '/search' });
    expect(search.status).toBe(429);
    expect(search.headers['ratelimit-policy']).toBe('"/search";q=1;w=1');
    // Another route's quota is untouched by the first one's, and the default route has none.
    expect((await send(port, { path: '/export' })).status).toBe(200);
    expect((await send(port, { path: '/export' })).status).toBe(200);
    const exported = await send(port, { path: '/export' });
    expect(exported.status).toBe(429);
    expect(exported.headers['ratelimit-policy']).toBe('"exports";q=2;w=2');
    for (let i = 0; i < 5; i++) expect((await send(port, { path: '/free' })).status).toBe(200);
  });

  it("caps a route's deadline at its own maximum", async () => {
    const { handler } = holding();
    const { port } = await start(
      { deadlineMs: 30_000, routes: [{ match: '/quick', deadlineMs: 250 }] },
      handler,
    );
    const quick = (await send(port, { path: '/quick' })).json<{ deadline: number }>();
    expect(quick.deadline).toBe(250);
    // A client may shorten it, never extend it.
    const asked = await send(port, { path: '/quick', headers: { 'spillway-deadline': '60000' } });
    expect(asked.json<{ deadline: number }>().deadline).toBe(250);
    const shorter = await send(port, { path: '/quick', headers: { 'spillway-deadline': '100' } });
    expect(shorter.json<{ deadline: number }>().deadline).toBe(100);
    expect((await send(port, { path: '/slow' })).json<{ deadline: number }>().deadline).toBe(
      30_000,
    );
  });

  it('never counts or limits an exempt route, even with every slot taken', async () => {
    const { handler, open, releaseAll } = holding();
    const { guard, port } = await start(
      {
        limit: 1,
        maxQueue: 0,
        quota: { ratePerSec: 1, burst: 1 },
        routes: [{ match: '/metrics', exempt: true }],
      },
      handler,
    );
    const held = send(port, { path: '/hold/1' });
    await until(() => open.length === 1);
    expect((await send(port, { path: '/other' })).status).toBe(429);
    for (let i = 0; i < 5; i++) expect((await send(port, { path: '/metrics' })).status).toBe(200);
    expect(guard.inflight).toBe(1);
    releaseAll();
    expect((await held).status).toBe(200);
  });

  it('fails at construction on a bad route, naming it', () => {
    expect(() => admission({ routes: [{ match: 42 as unknown as string }] })).toThrow(
      /routes\[\]\.match/,
    );
    expect(() =>
      admission({
        routes: [
          { match: '/a', name: 'same' },
          { match: '/b', name: 'same' },
        ],
      }),
    ).toThrow(SpillwayConfigError);
    expect(() => admission({ routes: [{ match: '/a', deadlineMs: -1 }] })).toThrow(
      /\/a\.deadlineMs/,
    );
    expect(() =>
      admission({ routes: [{ match: '/a', criticality: { lineShare: { sheddable: 2 } } }] }),
    ).toThrow(/lineShare\.sheddable/);
  });
});
