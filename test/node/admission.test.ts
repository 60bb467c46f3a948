// The node:http guard over real sockets on port 0, on a virtual clock so waits are exact.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DependencyOverloadedError, QueueFullError } from '../../src/index.js';
import {
  admission,
  type AdmissionOptions,
  type AdmittedHandler,
  type RequestContext,
} from '../../src/node/index.js';
import { createVirtualClock, type VirtualClock } from '../../src/testing/index.js';
import { memoryMonitorWith } from '../../src/node/memory-monitor.js';
import { close, keepAliveAgent, listen, send, until } from '../helpers/http.js';
import { unreachableStore } from '../helpers/stand-ins.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

/** Work that holds its slot until released by the test, or until its signal aborts. */
function gate() {
  const open: (() => void)[] = [];
  const seen: RequestContext[] = [];
  const stopped: string[] = [];
  const handler: AdmittedHandler = async (req, res, ctx) => {
    seen.push(ctx);
    if (!req.url?.startsWith('/work')) {
      res.end('fast');
      return;
    }
    await new Promise<void>((resolve) => {
      open.push(resolve);
      ctx.signal.addEventListener('abort', () => {
        stopped.push(String((ctx.signal.reason as Error).name));
        resolve();
      });
    });
    if (!res.destroyed) res.end('done');
  };
  return { handler, open, seen, stopped, releaseAll: () => open.splice(0).forEach((f) => f()) };
}

async function start(options: AdmissionOptions, handler: AdmittedHandler, clock?: VirtualClock) {
  const guard = admission({ clock: clock ?? createVirtualClock(), ...options });
  const server = createServer(guard.handle(handler));
  servers.push(server);
  const port = await listen(server);
  return { guard, port };
}

describe('admission over node:http', () => {
  it('429 for a spent quota: exact headers, RateLimit fields and problem body', async () => {
    const { port } = await start(
      { quota: { ratePerSec: 2, burst: 2, name: 'per-client' } },
      (_q, res) => res.end('ok'),
    );
    expect((await send(port)).status).toBe(200);
    expect((await send(port)).status).toBe(200);
    const r = await send(port);
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('1');
    expect(r.headers['spillway-retry']).toBe('later');
    expect(r.headers['ratelimit-policy']).toBe('"per-client";q=2;w=1');
    expect(r.headers['ratelimit']).toBe('"per-client";r=0;t=1');
    expect(r.headers['content-type']).toBe('application/problem+json');
    expect(r.json()).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      status: 429,
      title: 'Quota exceeded',
      retryAfterMs: 500,
      spillwayRetry: 'later',
    });
  });

  it('a shared store that is down with policy closed answers 503 elsewhere, not 429', async () => {
    const down = unreachableStore();
    const { port } = await start({ quota: { ratePerSec: 10, burst: 10, store: down } }, (_q, res) =>
      res.end('ok'),
    );
    const r = await send(port);
    expect(r.status).toBe(503);
    expect(r.headers['spillway-retry']).toBe('elsewhere');
    expect(r.headers['retry-after']).toBeUndefined();
    expect(r.json()).toMatchObject({ type: 'urn:spillway:problem:limiter-unavailable' });
  });

  it('503 for capacity with Retry-After ≥ 1, and health routes answer while user routes are saturated', async () => {
    const g = gate();
    const { port, guard } = await start({ limit: 2, maxQueue: 0 }, g.handler);
    const held = [send(port, { path: '/work' }), send(port, { path: '/work' })];
    await until(() => g.open.length === 2);
    const r = await send(port, { path: '/work' });
    expect(r.status).toBe(503);
    expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(r.headers['spillway-retry']).toBe('later');
    expect(r.json()).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      status: 503,
    });
    const health = await send(port, { path: '/healthz' });
    expect(health.status).toBe(200);
    expect(guard.stats()).toEqual({ active: 2, queued: 0, limit: 2 });
    g.releaseAll();
    expect((await Promise.all(held)).map((a) => a.status)).toEqual([200, 200]);
  });

  it('maxInFlight caps the process across routes, after each route’s own limit', async () => {
    const g = gate();
    const { port, guard } = await start(
      {
        limit: 5,
        maxInFlight: 3,
        routes: [{ name: 'reports', match: '/work/reports', limit: 5 }],
      },
      g.handler,
    );
    const held = [
      send(port, { path: '/work' }),
      send(port, { path: '/work' }),
      send(port, { path: '/work/reports' }),
    ];
    await until(() => g.open.length === 3);
    // Each route has room; the process has none.
    for (const path of ['/work', '/work/reports']) {
      const r = await send(port, { path });
      expect(r.status).toBe(503);
      expect(r.headers['spillway-retry']).toBe('later');
      expect(r.json()).toMatchObject({ type: 'urn:spillway:problem:server-overloaded' });
    }
    // The refused requests gave their route's permit back.
    expect(guard.stats()).toMatchObject({ active: 2 });
    expect(guard.stats('reports')).toMatchObject({ active: 1 });
    expect((await send(port, { path: '/healthz' })).status).toBe(200); // exempt
    g.releaseAll();
    expect((await Promise.all(held)).map((a) => a.status)).toEqual([200, 200, 200]);
    expect((await send(port, { path: '/fast' })).status).toBe(200);
    expect(() => admission({ maxInFlight: 0 })).toThrow(/`maxInFlight`.*got 0/);
  });

  it('tenantShare: no key holds more than its share of the slots; borrowing gives way to others', async () => {
    const g = gate();
    const key = (req: { headers: Record<string, unknown> }) => req.headers['x-client-id'] as string;
    const as = (id: string, path = '/work') => send(port, { path, headers: { 'x-client-id': id } });
    const { port } = await start({ limit: 4, key, tenantShare: { maxShare: 0.5 } }, g.handler);
    const held = [as('a'), as('a')];
    await until(() => g.open.length === 2);
    const third = await as('a', '/fast');
    expect(third.status).toBe(503);
    expect(third.json()).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      detail: expect.stringMatching(/its share of the route's slots/) as unknown,
    });
    expect((await as('b', '/fast')).status).toBe(200); // the others' slots are theirs
    g.releaseAll();
    await Promise.all(held);
    expect((await as('a', '/fast')).status).toBe(200); // back under its share

    // Borrowing: a key over its share takes free slots nobody waits for, and no more.
    const b = gate();
    const lend = await start(
      {
        limit: 3,
        maxQueue: 2,
        maxQueueWaitMs: 10_000,
        key,
        tenantShare: { maxShare: 0.34, borrow: true },
      },
      b.handler,
    );
    const by = (id: string, path = '/work') =>
      send(lend.port, { path, headers: { 'x-client-id': id } });
    const greedy = [by('a'), by('a'), by('a')];
    await until(() => b.open.length === 3);
    expect(lend.guard.stats()).toMatchObject({ active: 3 });
    const polite = by('b', '/fast'); // waits in line for a slot
    await until(() => lend.guard.stats()?.queued === 1);
    // While b waits, a is held to its share: refused at the door.
    expect((await by('a', '/fast')).status).toBe(503);
    b.open.shift()!(); // one of a's finishes: the slot goes to b
    expect((await polite).status).toBe(200);
    b.releaseAll();
    await Promise.all(greedy);
    expect(() => admission({ tenantShare: { maxShare: 0 } })).toThrow(/tenantShare.maxShare/);
    expect(() => admission({ limit: false, tenantShare: { maxShare: 0.5 } })).toThrow(
      /tenantShare/,
    );
  });

  it('memory pressure sheds sheddable work and holds in flight where it stood', async () => {
    const clock = createVirtualClock();
    const usage = { heapUsedBytes: 10, rssBytes: 10 };
    using memory = memoryMonitorWith(() => ({ ...usage }), { maxHeapUsedBytes: 100, clock });
    const g = gate();
    const { port, guard } = await start({ memory }, g.handler, clock);
    const held = [send(port, { path: '/work' }), send(port, { path: '/work' })];
    await until(() => g.open.length === 2);
    usage.heapUsedBytes = 150;
    await clock.advance(250);
    const sheddable = await send(port, { headers: { 'spillway-criticality': 'sheddable' } });
    expect(sheddable.status).toBe(503);
    expect(sheddable.json()).toMatchObject({ type: 'urn:spillway:problem:server-overloaded' });
    // Critical work only as others finish: two in flight when the pressure was seen.
    expect((await send(port, { path: '/fast' })).status).toBe(503);
    g.open.shift()!();
    await until(() => guard.inflight === 1);
    expect((await send(port, { path: '/fast' })).status).toBe(200);
    usage.heapUsedBytes = 50;
    await clock.advance(250);
    expect(
      (await send(port, { path: '/fast', headers: { 'spillway-criticality': 'sheddable' } }))
        .status,
    ).toBe(200);
    g.releaseAll();
    await Promise.all(held);
  });

  it('a spent Spillway-Deadline is refused at once with never and no Retry-After', async () => {
    const { port } = await start({}, (_q, res) => res.end('ok'));
    const r = await send(port, { headers: { 'spillway-deadline': '0' } });
    expect(r.status).toBe(503);
    expect(r.headers['spillway-retry']).toBe('never');
    expect(r.headers['retry-after']).toBeUndefined();
    expect(r.json()).toMatchObject({
      type: 'urn:spillway:problem:deadline-exceeded',
      retryAfterMs: null,
    });
  });

  it('the handler gets a deadline no longer than the server’s maximum, however much the client asks for', async () => {
    const clock = createVirtualClock();
    const seen: number[] = [];
    const { port } = await start(
      { deadlineMs: 1_000 },
      (_q, res, ctx) => (seen.push(ctx.remainingMs()), res.end()),
      clock,
    );
    await send(port, { headers: { 'spillway-deadline': '86400000' } });
    await send(port, { headers: { 'spillway-deadline': '250' } });
    expect(seen).toEqual([1_000, 250]);
  });

  it('client disconnect aborts the handler’s signal; the slot is freed only when the work has stopped', async () => {
    const g = gate();
    const { port, guard } = await start({ limit: 1 }, g.handler);
    const controller = new AbortController();
    const pending = send(port, { path: '/work', signal: controller.signal }).catch(() => 'aborted');
    await until(() => g.open.length === 1);
    expect(guard.stats()?.active).toBe(1);
    controller.abort();
    expect(await pending).toBe('aborted');
    await until(() => g.stopped.length === 1);
    expect(g.stopped).toEqual(['AbortError']);
    await until(() => guard.stats()?.active === 0);
  });

  it('a client that leaves while it waits in line leaves the line at once, and its handler never runs', async () => {
    const g = gate();
    const ran: (string | undefined)[] = [];
    const { port, guard } = await start(
      { limit: 1, maxQueue: 2, maxQueueWaitMs: 60_000 },
      (req, res, ctx) => {
        ran.push(req.url);
        return g.handler(req, res, ctx);
      },
    );
    const holder = send(port, { path: '/work/hold' });
    await until(() => g.open.length === 1);
    const controller = new AbortController();
    const gone = send(port, { path: '/work/gone', signal: controller.signal }).catch(() => 'gone');
    await until(() => guard.stats()?.queued === 1);
    controller.abort();
    expect(await gone).toBe('gone');
    await until(() => guard.stats()?.queued === 0);
    expect(guard.stats()).toEqual({ active: 1, queued: 0, limit: 1 });
    g.releaseAll();
    expect((await holder).status).toBe(200);
    expect((await send(port, { path: '/after' })).status).toBe(200);
    expect(ran).toEqual(['/work/hold', '/after']);
  });

  it('the deadline aborts the work through the signal, and the permit is held until the work settles', async () => {
    const clock = createVirtualClock();
    let finishWork: (() => void) | undefined;
    const { port, guard } = await start(
      { limit: 1, deadlineMs: 100 },
      async (_q, res, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        // The work takes a little while to wind down after being told to stop.
        await new Promise<void>((resolve) => (finishWork = resolve));
        res.writeHead(504).end();
      },
      clock,
    );
    const pending = send(port);
    await until(() => guard.stats()?.active === 1);
    await clock.advance(100);
    await until(() => finishWork !== undefined);
    expect(guard.stats()?.active).toBe(1); // signalled, but the work has not settled yet
    finishWork!();
    expect((await pending).status).toBe(504);
    await until(() => guard.stats()?.active === 0);
  });

  it('sheds by criticality: sheddable first, then sheddable-plus; critical displaces them from a full line', async () => {
    const g = gate();
    const { port, guard } = await start(
      { limit: 1, maxQueue: 4, maxQueueWaitMs: 60_000 },
      g.handler,
    );
    const queued = (n: number) => until(() => guard.stats()!.queued === n);
    const c = (criticality: string) =>
      send(port, { path: '/work', headers: { 'spillway-criticality': criticality } });
    const typeOf = (a: { json<T>(): T }) => a.json<{ type: string }>().type.split(/[#:]/).pop();
    const first = send(port, { path: '/work' });
    await until(() => g.open.length === 1);
    const sheddable = await c('sheddable'); // no share of the line at all
    expect([sheddable.status, typeOf(sheddable)]).toEqual([503, 'shed']);
    const plus = [c('sheddable-plus')];
    await queued(1);
    plus.push(c('sheddable-plus'));
    await queued(2);
    const third = await c('sheddable-plus'); // its share, half the line, is used up
    expect([third.status, typeOf(third)]).toEqual([503, 'shed']);
    const critical = [c('critical')];
    await queued(3);
    critical.push(c('critical'));
    await queued(4);
    // The line is full: each further critical arrival displaces the newest sheddable-plus waiter.
    critical.push(c('critical'));
    const displaced = await plus[1]!;
    expect([displaced.status, typeOf(displaced)]).toEqual([503, 'shed']);
    critical.push(c('critical'));
    const displacedToo = await plus[0]!;
    expect([displacedToo.status, typeOf(displacedToo)]).toEqual([503, 'shed']);
    await queued(4);
    const full = await c('critical'); // a line full of critical work: plain capacity
    expect([full.status, typeOf(full)]).toEqual([503, 'temporary-reduced-capacity']);
    g.releaseAll();
    for (let served = 0; served < 4; served++) {
      await until(() => g.open.length === 1);
      expect(g.seen.at(-1)!.criticality).toBe('critical');
      g.releaseAll();
    }
    const statuses = (await Promise.all([first, ...critical])).map((a) => a.status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
  });

  it('never sheds critical-plus before critical: it displaces critical waiters, never the reverse', async () => {
    const g = gate();
    const { port, guard } = await start(
      {
        limit: 1,
        maxQueue: 2,
        maxQueueWaitMs: 60_000,
        criticality: { ceiling: 'critical-plus' },
      },
      g.handler,
    );
    const queued = (n: number) => until(() => guard.stats()!.queued === n);
    const c = (criticality: string) =>
      send(port, { path: '/work', headers: { 'spillway-criticality': criticality } });
    const typeOf = (a: { json<T>(): T }) => a.json<{ type: string }>().type.split(/[#:]/).pop();
    const first = send(port, { path: '/work' });
    await until(() => g.open.length === 1);
    const critical = [c('critical')];
    await queued(1);
    critical.push(c('critical'));
    await queued(2);
    // A full line of critical work: a critical-plus arrival takes the newest critical place.
    const plus = [c('critical-plus')];
    const displaced = await critical[1]!;
    expect([displaced.status, typeOf(displaced)]).toEqual([503, 'shed']);
    plus.push(c('critical-plus'));
    const displacedToo = await critical[0]!;
    expect([displacedToo.status, typeOf(displacedToo)]).toEqual([503, 'shed']);
    await queued(2);
    // A line of critical-plus work: a critical arrival displaces nobody.
    const late = await c('critical');
    expect([late.status, typeOf(late)]).toEqual([503, 'temporary-reduced-capacity']);
    g.releaseAll();
    for (let served = 0; served < 2; served++) {
      await until(() => g.open.length === 1);
      expect(g.seen.at(-1)!.criticality).toBe('critical-plus');
      g.releaseAll();
    }
    expect((await Promise.all([first, ...plus])).map((a) => a.status)).toEqual([200, 200, 200]);
    // Nor can a configuration give critical-plus a smaller share of the line than critical.
    expect(() =>
      admission({ criticality: { lineShare: { 'critical-plus': 0.5, critical: 1 } } }),
    ).toThrow(/lineShare\.critical/);
  });

  it('a client cannot raise its criticality above the ceiling', async () => {
    const seen: string[] = [];
    const { port } = await start(
      { criticality: { ceiling: 'critical' } },
      (_q, res, ctx) => (seen.push(ctx.criticality), res.end()),
    );
    await send(port, { headers: { 'spillway-criticality': 'critical-plus' } });
    await send(port, { headers: { 'spillway-criticality': 'sheddable' } });
    await send(port);
    expect(seen).toEqual(['critical', 'sheddable', 'critical']);
  });

  it('propagates a dependency’s overload: later as later, retried-below or stop as never, and local refusals', async () => {
    const errors: Record<string, Error> = {
      '/later': new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 3_000 }),
      '/retried': new DependencyOverloadedError('busy', { signal: 'later', attempts: 3 }),
      '/stop': new DependencyOverloadedError('stop', { signal: 'never' }),
      '/local': new QueueFullError({ retryAfterMs: 10 }),
      '/plain': Object.assign(new Error('upstream said 503'), { status: 503 }),
      '/bug': new Error('a bug'),
    };
    const logged: unknown[] = [];
    const { port } = await start({ onError: (e) => logged.push(e) }, (req) =>
      Promise.reject(errors[req.url!]!),
    );
    const later = await send(port, { path: '/later' });
    expect([later.status, later.headers['spillway-retry'], later.headers['retry-after']]).toEqual([
      503,
      'later',
      '3',
    ]);
    expect(later.json()).toMatchObject({ type: 'urn:spillway:problem:dependency-overloaded' });
    for (const path of ['/retried', '/stop']) {
      const r = await send(port, { path });
      expect([r.status, r.headers['spillway-retry'], r.headers['retry-after']]).toEqual([
        503,
        'never',
        undefined,
      ]);
    }
    expect((await send(port, { path: '/local' })).headers['spillway-retry']).toBe('later');
    expect((await send(port, { path: '/plain' })).status).toBe(503);
    const bug = await send(port, { path: '/bug' });
    expect(bug.status).toBe(500);
    expect(logged).toEqual([errors['/bug']]);
  });

  it('ignores a spoofed x-client-id or X-Forwarded-For unless trusted', async () => {
    const quota = { ratePerSec: 1, burst: 1 };
    const plain = await start({ quota }, (_q, res) => res.end());
    expect(
      (await send(plain.port, { headers: { 'x-client-id': 'a', 'x-forwarded-for': '1.1.1.1' } }))
        .status,
    ).toBe(200);
    expect(
      (await send(plain.port, { headers: { 'x-client-id': 'b', 'x-forwarded-for': '2.2.2.2' } }))
        .status,
    ).toBe(429);

    const keyed = await start(
      { quota, key: (req) => req.headers['x-client-id'] as string | undefined },
      (_q, res) => res.end(),
    );
    expect((await send(keyed.port, { headers: { 'x-client-id': 'a' } })).status).toBe(200);
    expect((await send(keyed.port, { headers: { 'x-client-id': 'b' } })).status).toBe(200);
    expect((await send(keyed.port, { headers: { 'x-client-id': 'a' } })).status).toBe(429);

    const proxied = await start({ quota, trustProxy: 1 }, (_q, res) => res.end());
    expect((await send(proxied.port, { headers: { 'x-forwarded-for': '1.1.1.1' } })).status).toBe(
      200,
    );
    expect((await send(proxied.port, { headers: { 'x-forwarded-for': '2.2.2.2' } })).status).toBe(
      200,
    );
    expect(
      (await send(proxied.port, { headers: { 'x-forwarded-for': 'not an address!' } })).status,
    ).toBe(200);
    expect(
      (await send(proxied.port, { headers: { 'x-forwarded-for': 'not an address!' } })).status,
    ).toBe(429);
  });

  it('keys an IPv6 client by its /56, so rotating its address does not buy a fresh quota', async () => {
    const quota = { ratePerSec: 1, burst: 1 };
    const status = async (port: number, from: string) =>
      (await send(port, { headers: { 'x-forwarded-for': from } })).status;
    const guarded = await start({ quota, trustProxy: 1 }, (_q, res) => res.end());
    expect(await status(guarded.port, '2001:db8:1:1200::1')).toBe(200);
    // Another address of the same /56: the same client, its quota spent.
    expect(await status(guarded.port, '2001:db8:1:12ab::99')).toBe(429);
    // The next /56 over is someone else.
    expect(await status(guarded.port, '2001:db8:1:1300::1')).toBe(200);
    // An IPv4 client arriving IPv4-mapped is that IPv4 client.
    expect(await status(guarded.port, '198.51.100.7')).toBe(200);
    expect(await status(guarded.port, '[::ffff:198.51.100.7]:443')).toBe(429);

    const perAddress = await start({ quota, trustProxy: 1, ipv6Prefix: 128 }, (_q, res) =>
      res.end(),
    );
    expect(await status(perAddress.port, '2001:db8:1:1200::1')).toBe(200);
    expect(await status(perAddress.port, '2001:db8:1:1200::2')).toBe(200);
    expect(() => admission({ ipv6Prefix: 0 })).toThrow(/`ipv6Prefix`.*got 0/);
    expect(() => admission({ ipv6Prefix: 56.5 })).toThrow(/`ipv6Prefix`/);
  });

  it('reads its request fields in any letter case', async () => {
    const seen: { criticality: string; remaining: number; attempt: number }[] = [];
    const { port } = await start({ deadlineMs: 1_000 }, (_q, res, ctx) => {
      seen.push({
        criticality: ctx.criticality,
        remaining: ctx.remainingMs(),
        attempt: ctx.attempt,
      });
      res.end();
    });
    const r = await send(port, {
      headers: {
        'SPILLWAY-DEADLINE': '50',
        'Spillway-Criticality': 'Sheddable',
        'spillway-ATTEMPT': '2',
      },
    });
    expect(r.status).toBe(200);
    expect(seen).toEqual([{ criticality: 'sheddable', remaining: 50, attempt: 2 }]);
  });

  it('hostile header values change nothing but fall back to defaults', async () => {
    const seen: { criticality: string; remaining: number; attempt: number }[] = [];
    const { port } = await start({ deadlineMs: 1_000 }, (_q, res, ctx) => {
      seen.push({
        criticality: ctx.criticality,
        remaining: ctx.remainingMs(),
        attempt: ctx.attempt,
      });
      res.end();
    });
    const hostile = ['-5', 'NaN', '1e309', '0x20', '1.5', 'critical-plus, sheddable'];
    for (const value of hostile) {
      const r = await send(port, {
        headers: {
          'spillway-deadline': value,
          'spillway-criticality': value,
          'spillway-attempt': value,
        },
      });
      expect(r.status).toBe(200);
    }
    for (const name of ['spillway-deadline', 'spillway-criticality', 'spillway-attempt']) {
      expect((await send(port, { headers: { [name]: '9'.repeat(10_240) } })).status).toBe(200);
    }
    const dup = await send(port, {
      headers: {
        'spillway-deadline': ['100', '200'],
        'spillway-criticality': ['sheddable', 'critical'],
      },
    });
    expect(dup.status).toBe(200);
    for (const s of seen)
      expect(s).toEqual({ criticality: 'critical', remaining: 1_000, attempt: 1 });
  });

  it('escalates clients that ignore 429 (penalty, then block, then closed connections) and lifts it step by step', async () => {
    const clock = createVirtualClock();
    let quotaCalls = 0;
    const { port } = await start(
      {
        quota: { ratePerSec: 1, burst: 1 },
        penaltyBox: {
          // The clock stands still between requests: none is within a refusal's round trip.
          graceMs: 0,
          threshold: 3,
          windowMs: 1_000,
          liftAfterMs: 5_000,
          steps: [{ waitMs: 2_000 }, { waitMs: 10_000, block: true, closeConnection: true }],
        },
      },
      (_q, res) => (quotaCalls++, res.end()),
      clock,
    );
    const agent = keepAliveAgent();
    expect((await send(port, { agent })).status).toBe(200);
    const kinds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await send(port, { agent });
      kinds.push(
        `${r.status} ${r.json<{ type: string }>().type.split(/[#:]/).pop()} ${r.headers.connection}`,
      );
      await clock.advance(10);
    }
    expect(kinds).toEqual([
      '429 quota-exceeded keep-alive',
      '429 quota-exceeded keep-alive',
      '429 quota-exceeded keep-alive',
      '429 abnormal-usage-detected keep-alive', // third early return: step 1, an enforced 2 s wait
      '429 abnormal-usage-detected keep-alive',
      '429 abnormal-usage-detected keep-alive',
      '429 client-blocked close', // still hammering: the cool-off block, connection closed
      '429 client-blocked close',
    ]);
    expect(quotaCalls).toBe(1);
    await clock.advance(10_000); // block over
    expect((await send(port)).status).toBe(200);
    await clock.advance(5_000);
    await clock.advance(5_000);
    expect((await send(port)).status).toBe(200); // lifted twice: back to normal
  });
});
