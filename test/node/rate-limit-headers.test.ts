// RateLimit fields on every response of a quota route, through all five adapters (node:http,
// Express 5, Fastify 5, Koa 3, Hono 4) over real sockets on port 0: the same fields on admitted
// responses, the same refusals with violated-policies, and `rateLimitHeaders` obeyed alike.
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../../src/index.js';
import { fastifySpillway } from '../../src/fastify/index.js';
import { spillway as honoSpillway, type SpillwayEnv } from '../../src/hono/index.js';
import type { AdmissionOptions } from '../../src/node/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, listen, send, until, type Answer } from '../helpers/http.js';
import { adapters, type Harness, type Work } from './adapter-harness.js';

let running: Harness[] = [];
afterEach(async () => {
  await Promise.all(running.map((h) => h.stop()));
  running = [];
});

/** What a client paces itself by: status, the two fields, and a refusal's problem members. */
function seen(a: Answer) {
  const body = a.status === 200 ? undefined : a.json();
  return {
    status: a.status,
    policy: a.headers['ratelimit-policy'],
    rateLimit: a.headers['ratelimit'],
    retryAfter: a.headers['retry-after'],
    type: body?.['type'],
    violated: body?.['violated-policies'],
  };
}

const work: Work = async (path, ctx) => {
  if (path.startsWith('/dep')) throw new DependencyOverloadedError('busy', { signal: 'later' });
  if (path.startsWith('/hold')) {
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
  }
  return 'ok';
};

async function run(adapter: keyof typeof adapters, options: Partial<AdmissionOptions>) {
  const clock = createVirtualClock();
  const h = await adapters[adapter](
    {
      clock,
      penaltyBox: false,
      key: (req) => req.headers['x-client-id'] as string | undefined,
      quota: [
        { name: 'second', ratePerSec: 1, burst: 2 },
        { name: 'hour', perWindow: 100, windowMs: 3_600_000 },
      ],
      ...options,
    },
    work,
  );
  running.push(h);
  const ask = async (path = '/a', id = 'c1') =>
    seen(await send(h.port, { path, headers: { 'x-client-id': id } }));
  return { h, clock, ask };
}

describe('RateLimit fields on every response of a quota route', () => {
  it('admitted responses carry them, refusals name the binding policy, alike on every adapter', async () => {
    const runs: Record<string, unknown[]> = {};
    for (const name of Object.keys(adapters) as (keyof typeof adapters)[]) {
      const { ask, clock } = await run(name, {});
      const steps = [await ask(), await ask(), await ask()];
      await clock.advance(1_000);
      // Admitted, then failed on a dependency: still the quota's answer for this client.
      steps.push(await ask('/dep'));
      steps.push(await ask('/a', 'c2'));
      runs[name] = steps;
    }
    const node = runs['node']!;
    expect(node).toEqual([
      {
        status: 200,
        policy: '"second";q=2;w=2, "hour";q=100;w=3600',
        rateLimit: '"second";r=1;t=1, "hour";r=99;t=36',
      },
      {
        status: 200,
        policy: '"second";q=2;w=2, "hour";q=100;w=3600',
        rateLimit: '"second";r=0;t=2, "hour";r=98;t=72',
      },
      {
        status: 429,
        policy: '"second";q=2;w=2, "hour";q=100;w=3600',
        rateLimit: '"second";r=0;t=2, "hour";r=98;t=72',
        retryAfter: '1',
        type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
        violated: ['second'],
      },
      {
        status: 503,
        policy: '"second";q=2;w=2, "hour";q=100;w=3600',
        rateLimit: '"second";r=0;t=2, "hour";r=97;t=108',
        retryAfter: '1',
        type: 'urn:spillway:problem:dependency-overloaded',
      },
      {
        status: 200,
        policy: '"second";q=2;w=2, "hour";q=100;w=3600',
        rateLimit: '"second";r=1;t=1, "hour";r=99;t=36',
      },
    ]);
    for (const [name, steps] of Object.entries(runs)) {
      expect({ adapter: name, steps }).toEqual({ adapter: name, steps: node });
    }
  });

  it("'refusals-only' keeps them off admitted responses; false off every response", async () => {
    for (const name of Object.keys(adapters) as (keyof typeof adapters)[]) {
      const only = await run(name, { rateLimitHeaders: 'refusals-only' });
      const admitted = await only.ask();
      expect({ name, ...admitted }).toEqual({ name, status: 200 });
      await only.ask();
      const refused = await only.ask();
      expect({ name, ...refused }).toMatchObject({ name, status: 429, violated: ['second'] });
      expect(refused.policy).toBe('"second";q=2;w=2, "hour";q=100;w=3600');

      const off = await run(name, { rateLimitHeaders: false });
      expect({ name, ...(await off.ask()) }).toEqual({ name, status: 200 });
      await off.ask();
      // No fields, and the body still names the policy the request violated.
      expect({ name, ...(await off.ask()) }).toMatchObject({
        name,
        status: 429,
        policy: undefined,
        rateLimit: undefined,
        retryAfter: '1',
        violated: ['second'],
      });
    }
  });

  it('a request refused for capacity after its quota admitted it carries no fields', async () => {
    for (const name of Object.keys(adapters) as (keyof typeof adapters)[]) {
      const { h, ask } = await run(name, { limit: 1, maxQueue: 0 });
      const leave = new AbortController();
      const holding = send(h.port, { path: '/hold', signal: leave.signal }).catch(() => 'gone');
      await until(() => h.stats()?.active === 1);
      const refused = await ask('/a', 'c2');
      expect({ name, ...refused }).toMatchObject({
        name,
        status: 503,
        policy: undefined,
        rateLimit: undefined,
        type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      });
      leave.abort();
      expect(await holding).toBe('gone');
      await until(() => h.stats()?.active === 0);
    }
  });

  it('Hono: on a Response the handler built itself, and a field the handler set wins', async () => {
    const app = new Hono<SpillwayEnv>();
    app.use(honoSpillway({ clock: createVirtualClock(), quota: { ratePerSec: 1, burst: 5 } }));
    app.get('/raw', () => new Response('raw', { headers: { 'content-type': 'text/plain' } }));
    app.get('/own', (c) => c.text('own', 200, { ratelimit: '"mine";r=1' }));
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    const port = await listen(server);
    try {
      const raw = await send(port, { path: '/raw' });
      expect([raw.body, raw.headers['ratelimit']]).toEqual(['raw', '"default";r=4;t=1']);
      const own = await send(port, { path: '/own' });
      expect(own.headers['ratelimit']).toBe('"mine";r=1');
      expect(own.headers['ratelimit-policy']).toBe('"default";q=5;w=5');
    } finally {
      await close(server);
    }
  });

  it('Fastify: the fields are the reply’s, seen by onSend hooks and by inject', async () => {
    const app = Fastify();
    await app.register(fastifySpillway, {
      clock: createVirtualClock(),
      quota: { ratePerSec: 1, burst: 5, name: 'api' },
    });
    const hooked: unknown[] = [];
    app.addHook('onSend', (_request, reply, payload, next) => {
      hooked.push(reply.getHeader('ratelimit'));
      next(null, payload);
    });
    app.get('/', () => 'ok');
    const a = await app.inject({ url: '/' });
    expect(a.headers['ratelimit']).toBe('"api";r=4;t=1');
    expect(a.headers['ratelimit-policy']).toBe('"api";q=5;w=5');
    expect(hooked).toEqual(['"api";r=4;t=1']);
    await app.close();
  });
});
