/**
 * The reference servers of the demo and the benchmarks: the same simulated database behind an
 * accept-everything server (`naive`) and behind Spillway (`bounded`), on node:http, Express 5
 * or Fastify 5.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type createExpress from 'express';
import type createFastify from 'fastify';
import type * as Cockatiel from 'cockatiel';
import type { RateStore } from '../../index.js';
import type { RequestContext } from '../../node/index.js';
import { admission } from '../../node/index.js';
import { decisionsPath, decisionTrace } from './decision-trace.js';
import { metricsPath, startMetricsEndpoint } from './metrics-endpoint.js';
import { openRedisClient } from './redis-client.js';
import { postgresDatabase } from './postgres-database.js';
import { boundedOptions, type ReferenceOptions } from './reference-options.js';
import { simulatedDatabase, type SimulatedDatabase } from './simulated-database.js';
import { referenceQuery, type SlowPathStats } from './slow-path.js';

export { boundedOptions, type ReferenceOptions } from './reference-options.js';

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: the CPU-bound shape
  }
}

const okBody = '{"ok":true}';

/** `/admin/service-ms?ms=300` changes the database's speed mid-run (the demo's slowdown). */
function adminRoute(db: SimulatedDatabase, req: IncomingMessage, res: ServerResponse): boolean {
  if (req.url?.startsWith('/admin/service-ms') !== true) return false;
  const ms = Number(new URL(req.url, 'http://localhost').searchParams.get('ms'));
  if (Number.isFinite(ms) && ms >= 1 && ms <= 60_000) db.setServiceMs(ms);
  res.end(JSON.stringify({ serviceMs: db.serviceMs }));
  return true;
}

function stats(
  db: SimulatedDatabase,
  slow: SlowPathStats | undefined,
  guardStats?: () => unknown,
): string {
  return JSON.stringify({
    rssBytes: process.memoryUsage.rss(),
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    db: {
      busy: db.busy,
      waiting: db.waiting,
      served: db.served,
      serviceMs: db.serviceMs,
      // PostgreSQL: queries cancelled in the database because their caller left.
      ...('cancelled' in db ? { cancelled: db.cancelled } : {}),
    },
    guard: guardStats?.() ?? null,
    ...(slow === undefined ? {} : { slow }),
  });
}

/** A running reference server. */
export interface ReferenceServer {
  readonly port: number;
  /** Stops listening, drops open connections, and closes the Redis client if any. */
  close(): Promise<void>;
}

/**
 * Starts a reference server; resolves with it once listening. `log` takes the few lines worth
 * telling the operator while it runs (Redis unreachable, and back).
 */
export async function startReferenceServer(
  o: ReferenceOptions,
  listen: { readonly port: number; readonly host: string },
  log: (line: string) => void = () => undefined,
): Promise<ReferenceServer> {
  if (o.postgresUrl === undefined) {
    const db = simulatedDatabase({
      connections: o.connections,
      serviceMs: o.serviceMs,
      // The naive pool waits without bound (its point); with an explicit --limit the pool keeps a
      // wait list of its own, as real pools do, so a cap above the pool size queues there.
      maxWaiting: o.mode === 'naive' ? Infinity : o.limit === undefined ? o.connections : 1_000,
    });
    return startOver(db, o, { listen, log });
  }
  const postgres = await postgresDatabase({
    url: o.postgresUrl,
    connections: o.connections,
    serviceMs: o.serviceMs,
  });
  try {
    const server = await startOver(postgres, o, { listen, log });
    return {
      port: server.port,
      close: async () => {
        await server.close();
        await postgres.close();
      },
    };
  } catch (error) {
    await postgres.close();
    throw error;
  }
}

/** The server of `o.mode` and `o.framework` over `db`. */
async function startOver(
  db: SimulatedDatabase,
  o: ReferenceOptions,
  at: {
    readonly listen: { readonly port: number; readonly host: string };
    readonly log: (line: string) => void;
  },
): Promise<ReferenceServer> {
  const { listen, log } = at;
  const query = referenceQuery(db, o.slowMs);
  const work: Parts['work'] = async (signal, req) => {
    if (o.work === 'cpu') spin(o.serviceMs);
    else await query(signal, req);
  };
  const report: Parts['report'] = (guardStats) => stats(db, query.slowStats(), guardStats);
  if (o.mode === 'bulkhead' && o.framework !== 'node') {
    throw new Error('bulkhead runs on --framework node only (it is the bare node:http peer)');
  }
  if (o.framework === 'express') return startExpress(o, { db, work, report, listen });
  if (o.framework === 'fastify') return startFastify(o, { db, work, report, listen });

  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  let closeRedis: (() => void) | undefined;
  if (o.mode === 'bulkhead') {
    handler = await bulkheadHandler(o, { db, work, report, listen });
  } else if (o.mode === 'naive') {
    handler = (req, res) => {
      if (req.url === '/healthz') return void res.end('ok');
      if (req.url === '/stats') return void res.end(report());
      if (adminRoute(db, req, res)) return;
      work(undefined, req).then(
        () => res.writeHead(200, ['content-type', 'application/json']).end(okBody),
        () => res.writeHead(500).end(),
      );
    };
  } else {
    const shared = o.redis === undefined ? undefined : await sharedQuotaStore(o.redis, log);
    closeRedis = shared?.close;
    const guard = admission(boundedOptions(o, shared?.store));
    const metrics = o.metrics === true ? await startMetricsEndpoint(guard) : undefined;
    const trace =
      o.decisions === true ? decisionTrace({ limit: () => guard.stats()?.limit }) : undefined;
    const closeStore = closeRedis;
    if (metrics !== undefined || trace !== undefined) {
      closeRedis = () => {
        closeStore?.();
        trace?.close();
        void metrics?.close();
      };
    }
    handler = guard.handle(async (req, res, ctx: RequestContext) => {
      if (metrics !== undefined && req.url === metricsPath) return metrics.handle(req, res);
      if (trace !== undefined && req.url === decisionsPath) {
        return void res
          .writeHead(200, ['content-type', 'application/json'])
          .end(JSON.stringify(trace.snapshot()));
      }
      if (req.url === '/stats') return void res.end(report(() => guard.stats()));
      if (req.url === '/healthz') return void res.end('ok');
      if (adminRoute(db, req, res)) return;
      await work(ctx.signal, req);
      res.writeHead(200, ['content-type', 'application/json']).end(okBody);
    });
  }
  const server = createServer({ keepAliveTimeout: 65_000 }, handler);
  let listening: ReferenceServer;
  try {
    listening = await listenOn(server, listen);
  } catch (error) {
    closeRedis?.();
    throw error;
  }
  return {
    port: listening.port,
    close: async () => {
      closeRedis?.();
      await listening.close();
    },
  };
}

/**
 * A Redis-backed quota store for the bounded server, with policy `local`: while Redis cannot
 * be used, each replica enforces its share of every quota in memory.
 */
async function sharedQuotaStore(
  redis: { readonly url: string; readonly prefix: string; readonly replicas: number },
  log: (line: string) => void,
): Promise<{ readonly store: RateStore; readonly close: () => void }> {
  const { redisStore } = await import('../../redis/index.js');
  const n = redis.replicas;
  const fallback =
    n === 1
      ? "this server enforces each per-client quota in memory on its own (policy 'local')"
      : `each of the ${n} replicas enforces 1/${n} of each per-client quota in memory (policy 'local')`;
  const { client, close } = await openRedisClient(redis.url, { fallback, log });
  const store = redisStore({
    client: client as Parameters<typeof redisStore>[0]['client'],
    prefix: redis.prefix,
    onError: 'local',
    replicas: n,
  });
  return { store, close };
}

interface Parts {
  readonly db: SimulatedDatabase;
  /** The request's work: its query (slow on the slow path), or CPU with `--work cpu`. */
  readonly work: (
    signal: AbortSignal | undefined,
    req: Pick<IncomingMessage, 'url' | 'headers'>,
  ) => Promise<void>;
  /** The /stats body, with the guard's own when given. */
  readonly report: (guardStats?: () => unknown) => string;
  readonly listen: { readonly port: number; readonly host: string };
}

async function listenOn(
  server: Server,
  listen: { readonly port: number; readonly host: string },
): Promise<{ port: number; close(): Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : listen.port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The peer: cockatiel's bulkhead in front of the pool, 503 when it refuses. */
async function bulkheadHandler(
  o: ReferenceOptions,
  p: Parts,
): Promise<(req: IncomingMessage, res: ServerResponse) => void> {
  const { bulkhead, BulkheadRejectedError } = await optionalPeer<typeof Cockatiel>('cockatiel');
  const policy = bulkhead(o.connections, 10);
  return (req, res) => {
    if (req.url === '/healthz') return void res.end('ok');
    if (req.url === '/stats') return void res.end(p.report());
    if (adminRoute(p.db, req, res)) return;
    policy
      .execute(() => p.work(undefined, req))
      .then(
        () => res.writeHead(200, ['content-type', 'application/json']).end(okBody),
        (error: unknown) => {
          if (error instanceof BulkheadRejectedError) {
            res.writeHead(503, ['retry-after', '1', 'content-length', '0']).end();
          } else res.writeHead(500).end();
        },
      );
  };
}

async function optionalPeer<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch {
    throw new Error(`this server needs the ${name} package: npm install ${name}`);
  }
}

async function startExpress(
  o: ReferenceOptions,
  p: Parts,
): Promise<{ port: number; close(): Promise<void> }> {
  const { default: express } = await optionalPeer<{ default: typeof createExpress }>('express');
  const app = express();
  app.get('/healthz', (_req, res) => void res.send('ok'));
  if (o.mode === 'naive') {
    app.get('/stats', (_req, res) => void res.type('json').send(p.report()));
    app.use((req, res, next) => {
      p.work(undefined, req).then(() => res.type('json').send(okBody), next);
    });
  } else {
    const { spillway } = await import('../../express/index.js');
    const guard = spillway(boundedOptions(o));
    app.get(
      '/stats',
      (_req, res) => void res.type('json').send(p.report(() => guard.admission.stats('reference'))),
    );
    app.use(
      guard.route(
        async (req, res, ctx) => {
          await p.work(ctx.signal, req);
          res.type('json').send(okBody);
        },
        { name: 'reference' },
      ),
    );
    app.use(guard.errorHandler());
  }
  return listenOn(createServer({ keepAliveTimeout: 65_000 }, app), p.listen);
}

async function startFastify(
  o: ReferenceOptions,
  p: Parts,
): Promise<{ port: number; close(): Promise<void> }> {
  const { default: Fastify } = await optionalPeer<{ default: typeof createFastify }>('fastify');
  const app = Fastify({ keepAliveTimeout: 65_000 });
  if (o.mode === 'bounded') {
    const { fastifySpillway } = await import('../../fastify/index.js');
    await app.register(fastifySpillway, boundedOptions(o));
  }
  app.get('/healthz', { config: { spillway: false } }, () => 'ok');
  app.get('/stats', { config: { spillway: false } }, (_request, reply) => {
    void reply
      .type('application/json')
      .send(p.report(o.mode === 'bounded' ? () => app.spillway.stats() : undefined));
  });
  app.all('/*', async (request, reply) => {
    await p.work(request.spillway?.signal, request.raw);
    return reply.type('application/json').send(okBody);
  });
  await app.listen({ port: p.listen.port, host: p.listen.host });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : p.listen.port,
    close: () => app.close(),
  };
}
