// The servers S8 measures, one per process: `node bench/http-servers.js <case>`. Each answers
// every request the same way (a 200, a 429 or a 503), reports its port over IPC, and answers
// {cmd: 'cpu'} with its process.cpuUsage(), so the parent can take CPU per response.
import { createServer, request } from 'node:http';
import { admission } from '../dist/node/index.js';

const kind = process.argv[2];
const never = new Promise(() => {});
const body = 'ok';

/** Occupies the only slot of a limit-1 guard forever, so every other request meets a full limit. */
function holdOneSlot(port) {
  request({ port, host: '127.0.0.1', path: '/hold', agent: false })
    .on('error', () => {})
    .end();
}

const cases = {
  'bare 200': () => createServer((_req, res) => res.end(body)),
  'bare 503': () =>
    createServer((_req, res) => {
      res.writeHead(503, { 'retry-after': '1', 'content-length': '0' });
      res.end();
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
    const server = createServer(guard.handle(() => never));
    server.once('listening', () => holdOneSlot(server.address().port));
    return server;
  },
  'spillway express 429': async () => {
    const { default: express } = await import('express');
    const { spillway } = await import('../dist/express/index.js');
    const app = express();
    app.use(spillway({ quota: { ratePerSec: 0.001, burst: 1 }, penaltyBox: false }));
    app.get('/{*p}', (_req, res) => res.send(body));
    return createServer(app);
  },
  'spillway express 503': async () => {
    const { default: express } = await import('express');
    const { spillway } = await import('../dist/express/index.js');
    const app = express();
    const guard = spillway({ limit: 1, penaltyBox: false });
    app.get(
      '/{*p}',
      guard.route(() => never),
    );
    const server = createServer(app);
    server.once('listening', () => holdOneSlot(server.address().port));
    return server;
  },
  'spillway fastify 429': async () => {
    const { default: Fastify } = await import('fastify');
    const { fastifySpillway } = await import('../dist/fastify/index.js');
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
    const { fastifySpillway } = await import('../dist/fastify/index.js');
    const app = Fastify();
    await app.register(fastifySpillway, { limit: 1, penaltyBox: false });
    app.get('/*', () => never);
    return { app, hold: true };
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
      b.execute(() => never).catch(() => {
        res.writeHead(503, { 'retry-after': '1', 'content-length': '0' });
        res.end();
      });
    });
    server.once('listening', () => holdOneSlot(server.address().port));
    return server;
  },
};

const make = cases[kind];
if (!make) {
  console.error(`unknown case '${kind}'; one of: ${Object.keys(cases).join(', ')}`);
  process.exit(2);
}
const made = await make();
let port;
if (typeof made.listen === 'function' && made.server === undefined) {
  await new Promise((resolve) => made.listen(0, '127.0.0.1', resolve));
  port = made.address().port;
} else {
  const app = made.app ?? made;
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = app.server.address().port;
  if (made.hold) holdOneSlot(port);
}
// The driver keeps its connections open across many phases with pauses in between.
(typeof made.listen === 'function' && made.server === undefined
  ? made
  : (made.app ?? made).server
).keepAliveTimeout = 0;
await new Promise((r) => setTimeout(r, 100));
process.on('message', (m) => {
  if (m?.cmd === 'cpu') process.send({ cpu: process.cpuUsage() });
});
process.send({ ready: true, port, cases: Object.keys(cases) });
