// The servers S8 measures, one per process: `node bench/lib/http-servers.js <case>`. Each answers
// every request the same way (a 200, a 429 or a 503), reports over IPC its port and whether the
// driver must first hold its only slot (the 503 cases; see hold-slot.js), and answers
// {cmd: 'cpu'} with its process.cpuUsage(), so the parent can take CPU per response ({cmd: 'exit'}
// ends it, so a profiled server writes its profile). A third
// argument names the build to load instead of dist/ (a folder at the repository's root, say a
// private `.dist-<name>`), so a change can be measured without rebuilding the shared dist/.
import { Server, createServer } from 'node:http';

const kind = process.argv[2];
const dist = new URL(`../../${process.argv[3] ?? 'dist'}/`, import.meta.url);
/** A module of the build under test, by its path inside the build (`node/index.js`). */
const fromBuild = (path) => import(new URL(path, dist).href);
const { admission } = await fromBuild('node/index.js');

/** Records `guard`'s decisions with spillway/otel into the OpenTelemetry SDK, for the process's life. */
async function observe(guard) {
  const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
  const { PrometheusExporter } = await import('@opentelemetry/exporter-prometheus');
  const { otelMetrics } = await fromBuild('otel/index.js');
  const meterProvider = new MeterProvider({
    readers: [new PrometheusExporter({ preventServerStart: true })],
  });
  otelMetrics({ meterProvider, routes: [guard] });
}
/** The guard options of `spillway serve bounded` at its defaults, with this per-client quota. */
async function serveBounded(clientRatePerSec, clientBurst) {
  const { boundedOptions } = await fromBuild('cli/serve/reference-options.js');
  return boundedOptions({
    mode: 'bounded',
    framework: 'node',
    connections: 10,
    serviceMs: 30,
    work: 'db',
    clientRatePerSec,
    clientBurst,
  });
}
const never = new Promise(() => {});
const body = 'ok';

/**
 * The handler of a 503 case: it never settles, so the first request (the driver's, see
 * hold-slot.js) keeps the only slot, and it tells the driver so.
 */
function holdForever() {
  process.send({ held: true });
  return never;
}

const cases = {
  'bare 200': () => createServer((_req, res) => res.end(body)),
  'bare 503': () =>
    createServer((_req, res) => {
      res.writeHead(503, { 'retry-after': '1', 'content-length': '0' });
      res.end();
    }),
  // The bare 503 with Node's keep-alive timeout on, as `spillway serve` runs (65 s; Node's
  // default is 5 s): the socket's timer is set after every response and cleared by the next
  // request. Every other case runs without it (see the end of this file).
  'bare 503 keep-alive timeout': () => ({
    server: createServer((_req, res) => {
      res.writeHead(503, { 'retry-after': '1', 'content-length': '0' });
      res.end();
    }),
    keepAliveTimeout: 65_000,
  }),
  'bare 503 + problem+json': () =>
    createServer((_req, res) => {
      const b = JSON.stringify({
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        retryAfterMs: 1000,
      });
      res.writeHead(503, {
        'retry-after': '1',
        'content-type': 'application/problem+json',
        'content-length': Buffer.byteLength(b),
      });
      res.end(b);
    }),
  // Each framework's cheapest 503, answered where Spillway's adapter answers: Express in the
  // first middleware, Fastify in an onRequest hook.
  'bare express 503': async () => {
    const { default: express } = await import('express');
    const app = express();
    app.use((_req, res) => {
      res.writeHead(503, { 'retry-after': '1', 'content-length': '0' });
      res.end();
    });
    return createServer(app);
  },
  'bare fastify 503': async () => {
    const { default: Fastify } = await import('fastify');
    const app = Fastify();
    app.addHook('onRequest', (_req, reply, done) => {
      void reply.code(503).header('retry-after', '1').send();
      done();
    });
    app.get('/*', () => body);
    return app;
  },
  'spillway node 200': () => {
    const guard = admission({ limit: 1000, penaltyBox: false });
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  'spillway node 429': () => {
    const guard = admission({ quota: { ratePerSec: 0.001, burst: 1 }, penaltyBox: false });
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  'spillway node 503': () => {
    const guard = admission({ limit: 1, penaltyBox: false });
    return { server: createServer(guard.handle(holdForever)), hold: true };
  },
  // A client that ignores its 429s, against a guard with the default penalty box: within a
  // few requests it is escalated up the ladder and stays at the top step (every request a
  // violation), so this is the refusal an abusive client gets.
  'spillway node 429 ignored': () => {
    const guard = admission({ quota: { ratePerSec: 0.001, burst: 1 } });
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  // The same client against `spillway serve bounded` as it is configured (its guard's options
  // from the CLI; the database a 30 ms wait): a quota of 150/s and 15 that admits some of the
  // client's requests, a concurrency limit of 10 with a line, a key function, exempt paths.
  'spillway node 429 serve bounded': async () => {
    const guard = admission(await serveBounded(150, 15));
    // With its length, so the instruction count's driver (which reads Content-Length) can parse it.
    const ok = ['content-type', 'application/json', 'content-length', '11'];
    return createServer(
      guard.handle(async (_req, res) => {
        await new Promise((r) => setTimeout(r, 30));
        res.writeHead(200, ok).end('{"ok":true}');
      }),
    );
  },
  // The same guard with a quota that admits nothing after the first request: its refusal alone,
  // without the admitted requests the row above averages in.
  'spillway node 429 serve bounded refused only': async () => {
    const guard = admission(await serveBounded(0.001, 1));
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  // The same guards without the retry-storm signal (`retryStorm: false`): what keeping each
  // route's histogram of attempts costs (BENCHMARKS.md, "Retry storms").
  'spillway node 200 no storm': () => {
    const guard = admission({ limit: 1000, penaltyBox: false, retryStorm: false });
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  'spillway node 503 no storm': () => {
    const guard = admission({ limit: 1, penaltyBox: false, retryStorm: false });
    return { server: createServer(guard.handle(holdForever)), hold: true };
  },
  // The same guards entering each request's ambient context (`ambientContext: true`, as a
  // default guard does once the process has a dependency): what that costs on Node 20 and 22,
  // where it turns on async hooks (BENCHMARKS.md, "Ambient context").
  'spillway node 200 + context': () => {
    const guard = admission({ limit: 1000, penaltyBox: false, ambientContext: true });
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  'spillway node 429 + context': () => {
    const guard = admission({
      quota: { ratePerSec: 0.001, burst: 1 },
      penaltyBox: false,
      ambientContext: true,
    });
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  'spillway node 503 + context': () => {
    const guard = admission({ limit: 1, penaltyBox: false, ambientContext: true });
    return { server: createServer(guard.handle(holdForever)), hold: true };
  },
  // The same guards observed: spillway/otel recording every decision into the OpenTelemetry
  // SDK (a Prometheus reader that is never scraped, so only the recording is measured).
  'spillway node 200 + otel': async () => {
    const guard = admission({ limit: 1000, penaltyBox: false });
    await observe(guard);
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  'spillway node 429 + otel': async () => {
    const guard = admission({ quota: { ratePerSec: 0.001, burst: 1 }, penaltyBox: false });
    await observe(guard);
    return createServer(guard.handle((_req, res) => res.end(body)));
  },
  'spillway node 503 + otel': async () => {
    const guard = admission({ limit: 1, penaltyBox: false });
    await observe(guard);
    return { server: createServer(guard.handle(holdForever)), hold: true };
  },
  'spillway express 429': async () => {
    const { default: express } = await import('express');
    const { spillway } = await fromBuild('express/index.js');
    const app = express();
    app.use(spillway({ quota: { ratePerSec: 0.001, burst: 1 }, penaltyBox: false }));
    app.get('/{*p}', (_req, res) => res.send(body));
    return createServer(app);
  },
  'spillway express 503': async () => {
    const { default: express } = await import('express');
    const { spillway } = await fromBuild('express/index.js');
    const app = express();
    const guard = spillway({ limit: 1, penaltyBox: false });
    app.get('/{*p}', guard.route(holdForever));
    return { server: createServer(app), hold: true };
  },
  'spillway fastify 429': async () => {
    const { default: Fastify } = await import('fastify');
    const { fastifySpillway } = await fromBuild('fastify/index.js');
    const app = Fastify();
    await app.register(fastifySpillway, {
      quota: { ratePerSec: 0.001, burst: 1 },
      penaltyBox: false,
    });
    app.get('/*', () => body);
    return app;
  },
  'spillway fastify 503': async () => {
    const { default: Fastify } = await import('fastify');
    const { fastifySpillway } = await fromBuild('fastify/index.js');
    const app = Fastify();
    await app.register(fastifySpillway, { limit: 1, penaltyBox: false });
    app.get('/*', holdForever);
    return { app, hold: true };
  },
  // Koa answers where its guard does, the same way: raw, in the first middleware, with Koa's own
  // response turned off. Hono answers through c.body in the first middleware, as its guard does.
  'bare koa 503': async () => {
    const { default: Koa } = await import('koa');
    const app = new Koa();
    app.use((ctx) => {
      ctx.respond = false;
      ctx.res.writeHead(503, { 'retry-after': '1', 'content-length': '0' });
      ctx.res.end();
    });
    return createServer(app.callback());
  },
  'spillway koa 429': async () => {
    const { default: Koa } = await import('koa');
    const { spillway } = await fromBuild('koa/index.js');
    const app = new Koa();
    app.use(spillway({ quota: { ratePerSec: 0.001, burst: 1 }, penaltyBox: false }));
    app.use((ctx) => {
      ctx.body = body;
    });
    return createServer(app.callback());
  },
  'spillway koa 503': async () => {
    const { default: Koa } = await import('koa');
    const { spillway } = await fromBuild('koa/index.js');
    const app = new Koa();
    app.use(spillway({ limit: 1, penaltyBox: false }));
    app.use(holdForever);
    return { server: createServer(app.callback()), hold: true };
  },
  'bare hono 503': async () => {
    const { Hono } = await import('hono');
    const { createAdaptorServer } = await import('@hono/node-server');
    const app = new Hono();
    app.use((c) => c.body(null, 503, { 'retry-after': '1' }));
    return createAdaptorServer({ fetch: app.fetch });
  },
  'spillway hono 429': async () => {
    const { Hono } = await import('hono');
    const { createAdaptorServer } = await import('@hono/node-server');
    const { spillway } = await fromBuild('hono/index.js');
    const app = new Hono();
    app.use(spillway({ quota: { ratePerSec: 0.001, burst: 1 }, penaltyBox: false }));
    app.get('*', (c) => c.text(body));
    return createAdaptorServer({ fetch: app.fetch });
  },
  'spillway hono 503': async () => {
    const { Hono } = await import('hono');
    const { createAdaptorServer } = await import('@hono/node-server');
    const { spillway } = await fromBuild('hono/index.js');
    const app = new Hono();
    app.use(spillway({ limit: 1, penaltyBox: false }));
    app.get('*', holdForever);
    return { server: createAdaptorServer({ fetch: app.fetch }), hold: true };
  },
  'express-rate-limit 8 429': async () => {
    const { default: express } = await import('express');
    const { rateLimit } = await import('express-rate-limit');
    const app = express();
    app.use(
      rateLimit({
        windowMs: 3_600_000,
        limit: 1,
        standardHeaders: 'draft-8',
        legacyHeaders: false,
      }),
    );
    app.get('/{*p}', (_req, res) => res.send(body));
    return createServer(app);
  },
  '@fastify/rate-limit 11 429': async () => {
    const { default: Fastify } = await import('fastify');
    const { default: rateLimit } = await import('@fastify/rate-limit');
    const app = Fastify();
    await app.register(rateLimit, { max: 1, timeWindow: 3_600_000 });
    app.get('/*', () => body);
    return app;
  },
  '@fastify/under-pressure 9 503': async () => {
    const { default: Fastify } = await import('fastify');
    const { default: underPressure } = await import('@fastify/under-pressure');
    const app = Fastify();
    await app.register(underPressure, { healthCheck: async () => false, healthCheckInterval: 100 });
    app.get('/*', () => body);
    await new Promise((r) => setTimeout(r, 300)); // let the first health check mark it unhealthy
    return app;
  },
  'cockatiel 3 bulkhead 503': async () => {
    const { bulkhead } = await import('cockatiel');
    const b = bulkhead(1, 0);
    const server = createServer((_req, res) => {
      b.execute(holdForever).catch(() => {
        res.writeHead(503, { 'retry-after': '1', 'content-length': '0' });
        res.end();
      });
    });
    return { server, hold: true };
  },
};

const make = cases[kind];
if (!make) {
  console.error(`unknown case '${kind}'; one of: ${Object.keys(cases).join(', ')}`);
  process.exit(2);
}
// A case returns a node:http server, a Fastify instance, or { server | app, hold }.
const made = await make();
let server;
let fastify;
let hold = false;
let keepAliveTimeout = 0;
if (made instanceof Server) server = made;
else if (typeof made.inject === 'function') fastify = made;
else ({ server, app: fastify, hold = false, keepAliveTimeout = 0 } = made);
if (fastify !== undefined) {
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  server = fastify.server;
} else {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}
const { port } = server.address();
// The driver keeps its connections open across many phases with pauses in between, and the
// timer a keep-alive timeout sets after each response is Node's cost, not the case's: off,
// unless the case asks for it.
server.keepAliveTimeout = keepAliveTimeout;
await new Promise((r) => setTimeout(r, 100));
process.on('message', (m) => {
  if (m?.cmd === 'cpu') process.send({ cpu: process.cpuUsage() });
  if (m?.cmd === 'exit') process.exit(0);
});
process.send({ ready: true, port, hold, cases: Object.keys(cases) });
