// The same guard behind each of the three adapters (node:http, Express 5, Fastify 5), on port 0,
// for tests that hold them to the same behaviour.
import { createServer, type Server } from 'node:http';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { spillway } from '../../src/express/index.js';
import { fastifySpillway } from '../../src/fastify/index.js';
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

export const adapters: Record<'node' | 'express' | 'fastify', Adapter> = {
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
};
