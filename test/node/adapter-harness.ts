// The same guard behind each of the five adapters (node:http, Express 5, Fastify 5, Koa 3 and
// Hono 4 on @hono/node-server), on port 0, for tests that hold them to the same behaviour.
import { createServer, type Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { spillway } from '../../src/express/index.js';
import { fastifySpillway } from '../../src/fastify/index.js';
import { spillway as honoSpillway, type SpillwayEnv } from '../../src/hono/index.js';
import { spillway as koaSpillway, type SpillwayState } from '../../src/koa/index.js';
import { admission, type AdmissionOptions, type RequestContext } from '../../src/node/index.js';
import { close, listen } from '../helpers/http.js';

/** The work behind every route: the request's path (with its query) and its context. */
export type Work = (path: string, context: RequestContext) => Promise<string>;

export interface Harness {
  port: number;
  /** The listening server (to watch its sockets). */
  server: Server;
  /** The guarded route's limit. */
  stats: () => { active: number; queued: number; limit: number } | undefined;
  /** Admitted requests not yet finished. */
  inflight: () => number;
  stop: () => Promise<void>;
}

export type Adapter = (options: AdmissionOptions, work: Work) => Promise<Harness>;

export const adapters: Record<'node' | 'express' | 'fastify' | 'koa' | 'hono', Adapter> = {
  node: async (options, work) => {
    const guard = admission(options);
    const server = createServer(
      guard.handle(async (req, res, ctx) => {
        res.end(await work(req.url!, ctx));
      }),
    );
    return {
      port: await listen(server),
      server,
      stats: () => guard.stats(),
      inflight: () => guard.inflight,
      stop: () => close(server),
    };
  },
  express: async (options, work) => {
    const app = express();
    const guard = spillway(options);
    app.get('/healthz', (_req, res) => void res.send('ok'));
    app.get(
      '/{*path}',
      guard.route(
        async (req, res, ctx) => {
          res.send(await work(req.originalUrl, ctx));
        },
        { name: 'default-express' },
      ),
    );
    app.use(guard.errorHandler());
    const server: Server = createServer(app);
    return {
      port: await listen(server),
      server,
      stats: () => guard.admission.stats('default-express'),
      inflight: () => guard.admission.inflight,
      stop: () => close(server),
    };
  },
  fastify: async (options, work) => {
    const app: FastifyInstance = Fastify();
    await app.register(fastifySpillway, options);
    app.get('/healthz', { config: { spillway: false } }, () => 'ok');
    app.get('/*', async (request) => work(request.url, request.spillway!));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    return {
      port,
      server: app.server,
      stats: () => app.spillway.stats(),
      inflight: () => app.spillway.inflight,
      stop: () => app.close(),
    };
  },
  koa: async (options, work) => {
    const app = new Koa<SpillwayState>();
    const guard = koaSpillway(options);
    app.use(guard);
    app.use(async (ctx) => {
      ctx.body = ctx.path === '/healthz' ? 'ok' : await work(ctx.url, ctx.state.spillway);
    });
    // Errors the guard does not answer are Koa's to log; none are expected here.
    app.silent = true;
    const handle = app.callback();
    const server: Server = createServer((req, res) => void handle(req, res));
    return {
      port: await listen(server),
      server,
      stats: () => guard.admission.stats(),
      inflight: () => guard.admission.inflight,
      stop: () => close(server),
    };
  },
  hono: async (options, work) => {
    const app = new Hono<SpillwayEnv>();
    const guard = honoSpillway(options);
    app.use(guard);
    app.get('/healthz', (c) => c.text('ok'));
    app.get('*', async (c) => c.text(await work(c.env.incoming.url!, c.var.spillway)));
    // Hono's own onError logs what it catches; the guard answers overload after it.
    app.onError((_error, c) => c.text('Internal Server Error', 500));
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    return {
      port: await listen(server),
      server,
      stats: () => guard.admission.stats(),
      inflight: () => guard.admission.inflight,
      stop: () => close(server),
    };
  },
};
