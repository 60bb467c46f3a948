// The same guard through all five adapters (node:http, Express 5, Fastify 5, Koa 3, Hono 4), over
// real sockets on port 0: every refusal reason must come out byte-for-byte the same.
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../../src/index.js';
import { fastifySpillway } from '../../src/fastify/index.js';
import type { AdmissionOptions } from '../../src/node/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { keepAliveAgent, send, until, type Answer } from '../helpers/http.js';
import { loopMonitor, unreachableStore } from '../helpers/stand-ins.js';
import { adapters, type Harness, type Work } from './adapter-harness.js';

let running: Harness[] = [];
afterEach(async () => {
  await Promise.all(running.map((h) => h.stop()));
  running = [];
});

/** What a refusal looks like on the wire, without the parts that legitimately vary. */
function wire(a: Answer) {
  // Successful answers are the frameworks' own business (content types, bodies).
  if (a.status === 200) return { status: 200, body: a.body.startsWith('ok') ? 'ok' : a.body };
  return {
    status: a.status,
    type: a.headers['content-type'],
    retryAfter: a.headers['retry-after'],
    signal: a.headers['spillway-retry'],
    policy: a.headers['ratelimit-policy'],
    rateLimit: a.headers['ratelimit'],
    body: a.json(),
  };
}

type Step =
  | 'ok'
  | 'deadline'
  | 'depLater'
  | 'depRetried'
  | 'capacity'
  | 'shed'
  | 'health'
  | 'queueTimeout'
  | 'quota'
  | 'otherClient';

async function scenario(name: string, harness: (o: AdmissionOptions, w: Work) => Promise<Harness>) {
  const clock = createVirtualClock();
  const gates: (() => void)[] = [];
  const aborted: string[] = [];
  const work: Work = async (path, ctx) => {
    if (path.startsWith('/dep-later'))
      throw new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 4_000 });
    if (path.startsWith('/dep-retried'))
      throw new DependencyOverloadedError('busy', { signal: 'later', attempts: 3 });
    if (path.startsWith('/hold')) {
      await new Promise<void>((resolve) => {
        gates.push(resolve);
        ctx.signal.addEventListener('abort', () => (aborted.push(path), resolve()));
      });
    }
    return `ok ${ctx.criticality}`;
  };
  const h = await harness(
    {
      clock,
      limit: 1,
      maxQueue: 1,
      maxQueueWaitMs: 50,
      quota: { ratePerSec: 1, burst: 7, name: 'api' },
      key: (req) => req.headers['x-client-id'] as string | undefined,
      penaltyBox: false,
    },
    work,
  );
  running.push(h);
  const results = {} as Record<Step, ReturnType<typeof wire>>;
  const ask = (path: string, headers: Record<string, string> = {}) =>
    send(h.port, { path, headers });
  results.ok = wire(await ask('/plain', { 'spillway-criticality': 'sheddable-plus' }));
  results.deadline = wire(await ask('/plain', { 'spillway-deadline': '0' }));
  results.depLater = wire(await ask('/dep-later'));
  results.depRetried = wire(await ask('/dep-retried'));
  // Saturate: one holding, one waiting, then refusals.
  const holding = ask('/hold-1');
  await until(() => h.stats()?.active === 1);
  const waiting = ask('/hold-2');
  await until(() => h.stats()?.queued === 1);
  results.capacity = wire(await ask('/plain'));
  results.shed = wire(await ask('/plain', { 'spillway-criticality': 'sheddable' }));
  results.health = wire(await send(h.port, { path: '/healthz' }));
  await clock.advance(50); // the waiter times out in line
  results.queueTimeout = wire(await waiting);
  gates.splice(0).forEach((f) => f());
  await holding;
  // Quota: burst 7, spent by the seven requests above that reached it; the next is refused.
  results.quota = wire(await ask('/plain'));
  // A different client has its own bucket.
  results.otherClient = wire(await ask('/plain', { 'x-client-id': 'other' }));
  await until(() => h.stats()?.active === 0);
  return { name, results, aborted };
}

describe('every adapter answers exactly like the node guard', () => {
  it('status, headers and body per refusal reason', async () => {
    const runs = [];
    for (const [name, harness] of Object.entries(adapters))
      runs.push(await scenario(name, harness));
    const node = runs[0]!.results;
    expect(node.ok).toMatchObject({ status: 200 });
    expect(node.deadline).toMatchObject({ status: 503, signal: 'never', retryAfter: undefined });
    expect(node.depLater).toMatchObject({ status: 503, signal: 'later', retryAfter: '4' });
    expect(node.depRetried).toMatchObject({ status: 503, signal: 'never' });
    expect(node.capacity).toMatchObject({ status: 503, signal: 'later', retryAfter: '1' });
    expect(node.shed).toMatchObject({ status: 503, body: { type: 'urn:spillway:problem:shed' } });
    expect(node.health).toMatchObject({ status: 200 });
    expect(node.queueTimeout).toMatchObject({ status: 503, signal: 'later' });
    expect(node.quota).toMatchObject({
      status: 429,
      policy: '"api";q=7;w=7',
      rateLimit: '"api";r=0;t=7',
      retryAfter: '1',
    });
    expect(node.otherClient).toMatchObject({ status: 200 });
    for (const run of runs.slice(1)) {
      expect({ adapter: run.name, ...run.results }).toEqual({
        adapter: run.name,
        ...runs[0]!.results,
      });
    }
  });

  it('the penalty box, a saturated event loop and an unreachable store, alike everywhere', async () => {
    const runs = [];
    for (const [name, harness] of Object.entries(adapters)) {
      runs.push({ name, results: await escalationScenario(harness) });
    }
    const node = runs[0]!.results;
    // Enforced waits say how long is left of them; the block closes the connection.
    expect(node.steps).toEqual([
      '200 - keep-alive',
      '429 quota-exceeded keep-alive Retry-After 1',
      '429 quota-exceeded keep-alive Retry-After 1',
      '429 abnormal-usage-detected keep-alive Retry-After 2',
      '429 abnormal-usage-detected keep-alive Retry-After 2',
      '429 client-blocked close Retry-After 10',
    ]);
    expect(node.overloaded).toMatchObject({
      status: 503,
      signal: 'later',
      retryAfter: '1',
      body: { type: 'urn:spillway:problem:server-overloaded' },
    });
    expect(node.critical).toMatchObject({ status: 200 });
    expect(node.unavailable).toMatchObject({
      status: 503,
      signal: 'elsewhere',
      retryAfter: undefined,
      body: { type: 'urn:spillway:problem:limiter-unavailable', retryAfterMs: null },
    });
    for (const run of runs.slice(1)) {
      expect({ adapter: run.name, ...run.results }).toEqual({ adapter: run.name, ...node });
    }
  });

  it('Express, Fastify, Koa and Hono hold the permit until the handler settles and abort it on disconnect', async () => {
    for (const name of ['express', 'fastify', 'koa', 'hono'] as const) {
      const stopped: string[] = [];
      const h = await adapters[name](
        { limit: 1, clock: createVirtualClock() },
        async (_path, ctx) => {
          await new Promise<void>((resolve) =>
            ctx.signal.addEventListener('abort', () => resolve()),
          );
          // Winding down takes a moment after the abort; the slot stays taken until then.
          await new Promise((r) => setTimeout(r, 20));
          stopped.push(name);
          return 'late';
        },
      );
      running.push(h);
      const controller = new AbortController();
      const pending = send(h.port, { path: '/slow', signal: controller.signal }).catch(
        () => 'gone',
      );
      await until(() => h.stats()?.active === 1);
      controller.abort();
      expect(await pending).toBe('gone');
      expect(h.stats()?.active).toBe(1);
      await until(() => stopped.length === 1);
      await until(() => h.stats()?.active === 0);
    }
  });

  it('Fastify: a refusal passes through onSend and onResponse hooks, body and type unchanged', async () => {
    // No route has settings of its own here, so the plugin never reads routeOptions.
    const app = Fastify();
    await app.register(fastifySpillway, {
      clock: createVirtualClock(),
      penaltyBox: false,
      quota: { ratePerSec: 1, burst: 1, name: 'api' },
    });
    const seen: { payload: unknown; type: unknown }[] = [];
    const responses: number[] = [];
    app.addHook('onSend', (_request, reply, payload, next) => {
      seen.push({ payload, type: reply.getHeader('content-type') });
      next();
    });
    app.addHook('onResponse', (_request, reply, next) => {
      responses.push(reply.statusCode);
      next();
    });
    app.get('/*', () => 'ok');
    expect((await app.inject({ url: '/a' })).statusCode).toBe(200);
    const refused = await app.inject({ url: '/a' });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.headers['content-length']).toBe(String(refused.body.length));
    expect(refused.headers['ratelimit-policy']).toBe('"api";q=1;w=1');
    expect(seen[1]).toEqual({ payload: refused.body, type: 'application/problem+json' });
    expect(responses).toEqual([200, 429]);
    await app.close();
  });

  it('Fastify: per-route config and inject', async () => {
    const app = Fastify();
    await app.register(fastifySpillway, { clock: createVirtualClock(), penaltyBox: false });
    app.get(
      '/limited',
      { config: { spillway: { quota: { ratePerSec: 1, burst: 1 } } } },
      () => 'ok',
    );
    app.get('/free', () => 'ok');
    const a = await app.inject({ url: '/limited' });
    const b = await app.inject({ url: '/limited' });
    const c = await app.inject({ url: '/free' });
    expect([a.statusCode, b.statusCode, c.statusCode]).toEqual([200, 429, 200]);
    expect(b.headers['ratelimit-policy']).toBe('"GET /limited";q=1;w=1');
    expect(b.json()).toMatchObject({
      status: 429,
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
    });
    await app.close();
  });
});

/** The reasons the first scenario leaves out: penalty, blocked, overloaded and unavailable. */
async function escalationScenario(harness: (o: AdmissionOptions, w: Work) => Promise<Harness>) {
  const clock = createVirtualClock();
  const work: Work = () => Promise.resolve('ok');
  // Escalation: a client that keeps coming back before its Retry-After.
  const boxed = await harness(
    {
      clock,
      quota: { ratePerSec: 1, burst: 1, name: 'api' },
      penaltyBox: {
        // The clock stands still between requests: none is within a refusal's round trip.
        graceMs: 0,
        threshold: 2,
        windowMs: 1_000,
        steps: [{ waitMs: 2_000 }, { waitMs: 10_000, block: true, closeConnection: true }],
      },
    },
    work,
  );
  running.push(boxed);
  const agent = keepAliveAgent();
  const steps: string[] = [];
  for (let i = 0; i < 6; i++) {
    const a = await send(boxed.port, { agent });
    const type = a.status === 200 ? '-' : a.json<{ type: string }>().type.split(/[#:]/).pop();
    const retryAfter = a.headers['retry-after'];
    steps.push(
      `${a.status} ${type} ${a.headers.connection}` +
        (retryAfter === undefined ? '' : ` Retry-After ${retryAfter}`),
    );
  }
  agent.destroy();
  // The event loop saturated: sheddable work is refused, critical work goes through.
  const monitor = loopMonitor((criticality) => criticality === 'sheddable');
  const loaded = await harness({ clock, eventLoop: monitor, penaltyBox: false }, work);
  running.push(loaded);
  const overloaded = wire(
    await send(loaded.port, { headers: { 'spillway-criticality': 'sheddable' } }),
  );
  const critical = wire(await send(loaded.port));
  // A shared quota store that cannot be reached, under the `closed` policy.
  const down = unreachableStore();
  const storeDown = await harness(
    { clock, quota: { ratePerSec: 10, burst: 10, store: down }, penaltyBox: false },
    work,
  );
  running.push(storeDown);
  const unavailable = wire(await send(storeDown.port));
  return { steps, overloaded, critical, unavailable };
}
