// The refusal channel (`spillway:http:refusal`) through each adapter, over real sockets: every
// answer Spillway writes instead of the handler's — an admission refusal, a handler failure
// mapped to a refusal, a 500 — is published exactly once, whichever path wrote it. A failure the
// guard hands to the framework (Express's `next(error)`, Fastify's error handling) is the
// framework's answer, not Spillway's, and is not published.
import { createServer } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../../src/index.js';
import { spillway } from '../../src/express/index.js';
import { refusalChannel, type AdmissionOptions } from '../../src/node/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, listen, send } from '../helpers/http.js';
import { adapters, type Harness, type Work } from './adapter-harness.js';

let running: Harness[] = [];
const published: unknown[] = [];
const listener = (message: unknown): void => void published.push(message);
afterEach(async () => {
  refusalChannel.unsubscribe(listener);
  published.length = 0;
  await Promise.all(running.map((h) => h.stop()));
  running = [];
});

/** `/dep` fails as an overloaded dependency, `/bug` as a bug; anything else answers 'ok'. */
const work: Work = (path) => {
  if (path.startsWith('/dep')) {
    return Promise.reject(
      new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 2_000 }),
    );
  }
  if (path.startsWith('/bug')) return Promise.reject(new Error('a bug, not overload'));
  return Promise.resolve('ok');
};

const options: AdmissionOptions = {
  penaltyBox: false,
  // The key is published only when asked for (see the last test).
  publishKey: true,
  // A client that sends `x-broken` makes the key function throw: admission itself fails.
  key: (req) => {
    if (req.headers['x-broken'] !== undefined) throw new Error('no key');
    return 'client-1';
  },
  onError: () => undefined,
};

/** The guarded route's name in each adapter's harness. */
const routeOf = {
  node: 'default',
  express: 'default-express',
  fastify: 'default',
  koa: 'default',
  hono: 'default',
} as const;

const failure = {
  reason: 'failure',
  status: 500,
  signal: undefined,
  route: undefined,
  key: undefined,
};

describe.each(Object.keys(adapters) as (keyof typeof adapters)[])(
  'the refusal channel through %s',
  (name) => {
    const start = async () => {
      const h = await adapters[name]({ ...options, clock: createVirtualClock() }, work);
      running.push(h);
      refusalChannel.subscribe(listener);
      return h;
    };
    const route = routeOf[name];

    it('an admission refusal is published once', async () => {
      const h = await start();
      const answer = await send(h.port, { headers: { 'spillway-deadline': '0' } });
      expect(answer.status).toBe(503);
      expect(published).toEqual([
        { reason: 'deadline', status: 503, signal: 'never', route, key: 'client-1' },
      ]);
    });

    it('a handler failure mapped to a refusal is published once', async () => {
      const h = await start();
      const answer = await send(h.port, { path: '/dep' });
      expect([answer.status, answer.headers['spillway-retry']]).toEqual([503, 'later']);
      expect(published).toEqual([
        { reason: 'dependency', status: 503, signal: 'later', route, key: 'client-1' },
      ]);
    });

    it('a failure inside admission is answered 500 and published once', async () => {
      const h = await start();
      const answer = await send(h.port, { headers: { 'x-broken': '1' } });
      expect(answer.status).toBe(500);
      expect(published).toEqual([failure]);
    });

    it('a handler bug: the guard’s 500 is published once, a framework’s own is not', async () => {
      const h = await start();
      const answer = await send(h.port, { path: '/bug' });
      expect(answer.status).toBe(500);
      expect(published).toEqual(name === 'node' ? [{ ...failure, route, key: 'client-1' }] : []);
    });
  },
);

describe('the client key on the refusal channel', () => {
  it('is left off unless the guard was asked to publish it', async () => {
    const h = await adapters.node(
      { ...options, publishKey: false, clock: createVirtualClock() },
      work,
    );
    running.push(h);
    refusalChannel.subscribe(listener);
    await send(h.port, { headers: { 'spillway-deadline': '0' } });
    await send(h.port, { path: '/dep' });
    expect(published).toEqual([
      { reason: 'deadline', status: 503, signal: 'never', route: 'default', key: undefined },
      { reason: 'dependency', status: 503, signal: 'later', route: 'default', key: undefined },
    ]);
  });
});

describe('the refusal channel through Express middleware and errorHandler()', () => {
  it('a failure behind app.use(guard) mapped by errorHandler() is published once', async () => {
    const app = express();
    const guard = spillway({ ...options, clock: createVirtualClock() });
    app.use(guard);
    app.get('/dep', () => {
      throw new DependencyOverloadedError('busy', { signal: 'never' });
    });
    app.use(guard.errorHandler());
    const server = createServer(app);
    const port = await listen(server);
    running.push({
      port,
      server,
      stats: () => undefined,
      inflight: () => 0,
      stop: () => close(server),
    });
    refusalChannel.subscribe(listener);
    const answer = await send(port, { path: '/dep' });
    expect([answer.status, answer.headers['spillway-retry']]).toEqual([503, 'never']);
    expect(published).toEqual([
      { reason: 'dependency', status: 503, signal: 'never', route: 'default', key: 'client-1' },
    ]);
  });
});
