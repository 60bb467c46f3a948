// `spillway/koa` over real sockets on a virtual clock, on Koa 3 and Koa 2: the cases every
// guard that writes after its middleware returns shares (../koa-hono/guard-cases.ts), on Koa's
// own app: the context on ctx.state, a refusal written on the raw response, a bug left to Koa.
import { createServer } from 'node:http';
import { PassThrough } from 'node:stream';
import Koa from 'koa';
import Koa2 from 'koa2';
import { describe, expect } from 'vitest';
import { DependencyOverloadedError } from '../../src/index.js';
import type { AdmissionOptions } from '../../src/node/index.js';
import { spillway, type SpillwayState } from '../../src/koa/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { guardCases, serve, type GuardedApp } from '../koa-hono/guard-cases.js';

async function start(App: typeof Koa, options: AdmissionOptions = {}): Promise<GuardedApp> {
  const clock = createVirtualClock();
  const guard = spillway({ clock, penaltyBox: false, ...options });
  const gates: (() => void)[] = [];
  const seen: GuardedApp['seen'] = [];
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
  const port = await serve(createServer((req, res) => void handle(req, res)));
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
  guardCases((options) => start(App, options), {
    contextIn: 'ctx.state',
    // The app-wide guard and the route's, one inside the other.
    routeCase: {},
    bug: {
      title: 'is left to Koa',
      check: (bug, s) => {
        expect([bug.status, bug.headers['content-type']]).toEqual([
          500,
          'text/plain; charset=utf-8',
        ]);
        // Koa's error handling answers it, past the logger.
        expect(s.seen.map((x) => x.status)).toEqual([503]);
      },
    },
  });
});
