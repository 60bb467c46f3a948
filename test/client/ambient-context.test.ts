// The ambient context through real servers on 127.0.0.1 (no other service needed): a front
// service behind each adapter's guard calls a downstream server through `dependency()` with no
// options at all, and the downstream server records what reached it. Requests of different
// criticalities and deadlines run at once, their handlers interleaved at every await, so a
// context that leaked from one request to another would show on the downstream side.
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependency, type Dependency } from '../../src/client/index.js';
import {
  criticalities,
  currentContext,
  outsideContext,
  type Criticality,
} from '../../src/index.js';
import { spillway } from '../../src/express/index.js';
import { admission, type AdmissionOptions } from '../../src/node/index.js';
import { close, listen, send } from '../helpers/http.js';
import { adapters, type Adapter, type Work } from '../node/adapter-harness.js';
import { startServer, type TestServer } from './servers.js';

let downstream: TestServer;
let dep: Dependency;
beforeAll(async () => {
  downstream = await startServer((_req, res) => {
    // Answers in 0–3 ms, so the front's calls come back out of order.
    setTimeout(() => res.end('ok'), Math.floor(Math.random() * 4));
  });
  dep = dependency({ name: 'downstream', baseUrl: downstream.url, limit: 500, maxQueue: 500 });
});
afterAll(() => downstream.close());

const pause = () =>
  new Promise<void>((resolve) => {
    if (Math.random() < 0.5) setImmediate(resolve);
    else setTimeout(resolve, Math.floor(Math.random() * 3));
  });

/** The front's work: two calls downstream, with pauses around them, and no options. */
const work: Work = async (path) => {
  const id = new URL(path, 'http://front').searchParams.get('id');
  await pause();
  await (await dep.fetch(`/?id=${id}&call=1`)).text();
  await pause();
  await (await dep.fetch(`/?id=${id}&call=2`)).text();
  return 'done';
};

const guardOptions: AdmissionOptions = {
  limit: 200,
  maxQueue: 200,
  maxQueueWaitMs: 10_000,
  deadlineMs: 600_000,
  penaltyBox: false,
  criticality: { ceiling: 'critical-plus' },
};

/** Express with `app.use(guard)` and a body parser between the guard and the route. */
const expressMiddleware: Adapter = async (options, w) => {
  const app = express();
  const guard = spillway(options);
  app.use(guard);
  app.use(express.json());
  app.post('/{*path}', async (req, res) => {
    res.send(await w(req.originalUrl, req.spillway!));
  });
  const server: Server = createServer(app);
  return {
    port: await listen(server),
    server,
    stats: () => guard.admission.stats(),
    inflight: () => guard.admission.inflight,
    stop: () => close(server),
  };
};

/** What the front was asked, by request id. */
interface Sent {
  readonly criticality: Criticality;
  readonly deadlineMs: number;
}

/** Sends `n` requests at once, each with its own criticality and deadline. */
async function storm(port: number, n: number, method = 'GET'): Promise<Map<string, Sent>> {
  const sent = new Map<string, Sent>();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const id = `r${i}-${Math.random().toString(36).slice(2, 8)}`;
      // Deadlines 60 s apart: far more than any delay a busy machine adds.
      const s: Sent = { criticality: criticalities[i % 4]!, deadlineMs: 60_000 * (1 + (i % 7)) };
      sent.set(id, s);
      const headers = {
        'spillway-criticality': s.criticality,
        'spillway-deadline': String(s.deadlineMs),
      };
      const answer = await send(
        port,
        method === 'POST'
          ? {
              method,
              path: `/work?id=${id}`,
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ id }),
            }
          : { method, path: `/work?id=${id}`, headers },
      );
      expect(answer.status).toBe(200);
    }),
  );
  return sent;
}

/** Checks every downstream request against what its front request was sent. */
function expectCarried(sent: Map<string, Sent>, from: number) {
  const seen = downstream.seen.slice(from);
  expect(seen).toHaveLength(sent.size * 2);
  for (const r of seen) {
    const id = new URL(r.url, 'http://x').searchParams.get('id')!;
    const want = sent.get(id)!;
    expect(r.headers['spillway-criticality'], id).toBe(want.criticality);
    const deadline = Number(r.headers['spillway-deadline']);
    expect(deadline, id).toBeLessThanOrEqual(want.deadlineMs);
    expect(deadline, id).toBeGreaterThan(want.deadlineMs - 30_000);
    expect(r.headers['spillway-attempt']).toBe('1');
  }
}

const cases: [string, Adapter, string?][] = [
  ...Object.entries(adapters).map(([name, a]): [string, Adapter] => [name, a]),
  ['express, app.use(guard) before express.json()', expressMiddleware, 'POST'],
];

describe.each(cases)('behind %s', (_name, adapter, method) => {
  it('every call downstream carries its own request’s deadline and criticality', async () => {
    const front = await adapter(guardOptions, work);
    try {
      for (let round = 0; round < 3; round++) {
        const from = downstream.seen.length;
        expectCarried(await storm(front.port, 48, method), from);
      }
    } finally {
      await front.stop();
    }
  });

  it('with ambientContext: false, only what each call passes (today’s behaviour)', async () => {
    const front = await adapter({ ...guardOptions, ambientContext: false }, work);
    try {
      const from = downstream.seen.length;
      await storm(front.port, 8, method);
      const seen = downstream.seen.slice(from);
      expect(seen).toHaveLength(16);
      for (const r of seen) {
        expect(r.headers['spillway-criticality']).toBe('critical');
        expect(r.headers['spillway-deadline']).toBeUndefined();
      }
    } finally {
      await front.stop();
    }
  });
});

describe('behind the node:http guard', () => {
  it('a request that says nothing gets the route’s own deadline and criticality downstream', async () => {
    const front = await adapters.node({ ...guardOptions, deadlineMs: 90_000 }, work);
    try {
      const from = downstream.seen.length;
      expect((await send(front.port, { path: '/work?id=plain' })).status).toBe(200);
      const seen = downstream.seen.slice(from);
      expect(seen).toHaveLength(2);
      for (const r of seen) {
        expect(r.headers['spillway-criticality']).toBe('critical');
        expect(Number(r.headers['spillway-deadline'])).toBeLessThanOrEqual(90_000);
        expect(Number(r.headers['spillway-deadline'])).toBeGreaterThan(60_000);
      }
    } finally {
      await front.stop();
    }
  });

  it('exempt routes and work started outside any request keep today’s behaviour', async () => {
    const guard = admission(guardOptions);
    const server = createServer(
      guard.handle(async (req, res) => {
        expect(currentContext()).toBeUndefined(); // /healthz is exempt
        await (await dep.fetch(`/?id=exempt`)).text();
        res.end('ok');
      }),
    );
    const port = await listen(server);
    try {
      const from = downstream.seen.length;
      expect((await send(port, { path: '/healthz' })).status).toBe(200);
      await (await dep.fetch('/?id=outside')).text();
      const seen = downstream.seen.slice(from);
      expect(seen.map((r) => r.headers['spillway-criticality'])).toEqual(['critical', 'critical']);
      expect(seen.map((r) => r.headers['spillway-deadline'])).toEqual([undefined, undefined]);
    } finally {
      await close(server);
    }
  });

  it('work a handler leaves running keeps the request’s context, unless started outside it', async () => {
    const guard = admission(guardOptions);
    const later: Promise<unknown>[] = [];
    const server = createServer(
      guard.handle((_req, res) => {
        later.push(
          new Promise((r) => setTimeout(r, 20)).then(() => dep.fetch('/?id=left-behind')),
          outsideContext(() =>
            new Promise((r) => setTimeout(r, 20)).then(() => dep.fetch('/?id=outside')),
          ),
        );
        res.end('ok');
      }),
    );
    const port = await listen(server);
    try {
      const from = downstream.seen.length;
      await send(port, {
        path: '/work',
        headers: { 'spillway-criticality': 'sheddable', 'spillway-deadline': '300000' },
      });
      await Promise.all(later);
      const byId = new Map(
        downstream.seen
          .slice(from)
          .map((r) => [new URL(r.url, 'http://x').searchParams.get('id'), r.headers]),
      );
      expect(byId.get('left-behind')?.['spillway-criticality']).toBe('sheddable');
      expect(byId.get('outside')?.['spillway-criticality']).toBe('critical');
      expect(byId.get('outside')?.['spillway-deadline']).toBeUndefined();
    } finally {
      await close(server);
    }
  });
});
