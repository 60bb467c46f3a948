// `spillway/hono` over real sockets (Hono 4 on @hono/node-server) on a virtual clock: the cases
// every guard that writes after its middleware returns shares (../koa-hono/guard-cases.ts), on
// Hono's own app: the context in c.var, refusals as Web Responses that keep the fields set before
// the guard, a bug answered by onError; and what the guard needs of the server.
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../../src/index.js';
import type { AdmissionOptions } from '../../src/node/index.js';
import { spillway, type SpillwayEnv } from '../../src/hono/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { guardCases, serve, type GuardedApp } from '../koa-hono/guard-cases.js';

async function start(options: AdmissionOptions = {}): Promise<GuardedApp & { errors: unknown[] }> {
  const clock = createVirtualClock();
  const guard = spillway({ clock, penaltyBox: false, ...options });
  const gates: (() => void)[] = [];
  const seen: GuardedApp['seen'] = [];
  const errors: unknown[] = [];
  const work = { running: 0, stopped: [] as string[] };
  const app = new Hono<SpillwayEnv>();
  // What a logger and a CORS middleware before the guard do.
  app.use(async (c, next) => {
    c.header('access-control-allow-origin', '*');
    await next();
    seen.push({ status: c.res.status, context: c.get('spillway') });
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
  const port = await serve(createAdaptorServer({ fetch: app.fetch }) as Server);
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
  guardCases(start, {
    contextIn: 'c.var',
    // The route's guard alone: the app-wide one lets it through.
    routeCase: { exempt: ['/limited'] },
    quotaRefusal: (refused) => {
      // Set by the middleware before the guard, kept on the refusal.
      expect(refused.headers['access-control-allow-origin']).toBe('*');
    },
    bug: {
      title: "keeps onError's answer",
      check: (bug, s) => {
        expect([bug.status, bug.body]).toEqual([500, 'Internal Server Error']);
        expect(s.seen.map((x) => x.status)).toEqual([503, 500]);
        expect(s.errors).toHaveLength(2);
      },
    },
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
