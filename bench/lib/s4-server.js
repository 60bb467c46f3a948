// One S4 server per process: `node bench/lib/s4-server.js <variant> <port>`. Two routes over the
// same process: /slow queries a simulated database (10 connections, 30 ms, slowed on demand
// through /admin/service-ms), /fast answers at once. Variants: fixed (Spillway, a cap of 10 on
// /slow), adaptive (Spillway, a gradientLimit on /slow), under-pressure (Fastify with
// @fastify/under-pressure, one reasonable configuration), naive (no protection).
import { createServer } from 'node:http';
import { gradientLimit } from '../../dist/index.js';
import { admission } from '../../dist/node/index.js';
import { simulatedDatabase } from '../../dist/cli/serve/simulated-database.js';

const [variant, portArg] = process.argv.slice(2);
const port = Number(portArg);
const db = simulatedDatabase({
  connections: 10,
  serviceMs: 30,
  maxWaiting: variant === 'naive' || variant === 'under-pressure' ? Infinity : 1_000,
});
const ok = '{"ok":true}';

function admin(url, res) {
  const ms = Number(new URL(url, 'http://localhost').searchParams.get('ms'));
  if (Number.isFinite(ms) && ms >= 1) db.setServiceMs(ms);
  res.end(JSON.stringify({ serviceMs: db.serviceMs }));
}

if (variant === 'under-pressure') {
  const { default: Fastify } = await import('fastify');
  const { default: underPressure } = await import('@fastify/under-pressure');
  const app = Fastify();
  await app.register(underPressure, {
    maxEventLoopDelay: 100,
    maxEventLoopUtilization: 0.98,
    retryAfter: 1,
  });
  app.get('/admin/service-ms', (req, reply) => admin(req.url, reply.raw));
  app.get('/stats', () => ({ guard: null }));
  app.get('/slow', async () => {
    await db.query();
    return ok;
  });
  app.get('/fast', async () => ok);
  await app.listen({ port, host: '127.0.0.1' });
} else {
  let handler;
  let guard;
  if (variant === 'naive') {
    handler = (req, res) => {
      if (req.url.startsWith('/admin/')) return admin(req.url, res);
      if (req.url.startsWith('/stats')) return res.end('{"guard":null}');
      if (req.url.startsWith('/slow'))
        db.query().then(
          () => res.end(ok),
          () => res.writeHead(500).end(),
        );
      else res.end(ok);
    };
  } else {
    const limit =
      variant === 'adaptive'
        ? gradientLimit({
            initialLimit: 10,
            minLimit: 2,
            maxLimit: 50,
            minWindowMs: 100,
            maxWindowMs: 250,
          })
        : 10;
    guard = admission({
      limit: 1_000,
      deadlineMs: 1_000,
      penaltyBox: false,
      exempt: ['/healthz', '/stats', '/admin/service-ms'],
      routes: [{ match: '/slow', name: 'slow', limit, maxQueue: 10, maxQueueWaitMs: 50 }],
    });
    handler = guard.handle(async (req, res, ctx) => {
      if (req.url.startsWith('/admin/')) return admin(req.url, res);
      if (req.url.startsWith('/stats'))
        return res.end(JSON.stringify({ guard: guard.stats('slow') }));
      if (req.url.startsWith('/slow')) await db.query(ctx.signal);
      res.end(ok);
    });
  }
  await new Promise((resolve) =>
    createServer({ keepAliveTimeout: 65_000 }, handler).listen(port, '127.0.0.1', resolve),
  );
}
process.stdout.write(`listening on ${port}\n`);
