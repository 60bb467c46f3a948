// Clients that try to steer what every client shares, through each adapter over real sockets on
// a virtual clock: short deadlines, disconnects, forged X-Forwarded-For, leaving while a remote
// quota store decides, and a key function that throws. None of them may move the route's
// adaptive limit, its stats, or another client's quota; the route's own deadline still counts.
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  aimdLimit,
  DeadlineExceededError,
  memoryRateStore,
  type RateDecision,
  type RateStore,
} from '../../src/index.js';
import type { AdmissionOptions, RequestContext } from '../../src/node/index.js';
import { createVirtualClock, type VirtualClock } from '../../src/testing/index.js';
import { send, until, type Answer } from '../helpers/http.js';
import { adapters, type Harness } from './adapter-harness.js';

let running: Harness[] = [];
afterEach(async () => {
  await Promise.all(running.map((h) => h.stop()));
  running = [];
});

/** An AIMD limit that reacts to every single sample: one drop and it backs off. */
function touchyLimit(clock: VirtualClock) {
  return aimdLimit({
    initialLimit: 40,
    minLimit: 2,
    maxLimit: 100,
    minWindowMs: 0,
    maxWindowMs: 0,
    minWindowSamples: 1,
    clock,
  });
}

/**
 * Work by path: `/stop-return` waits for its signal and returns; `/stop-throw` waits for it and
 * fails as a dependency would that ran out of the time it was given; `/hold` waits for the test
 * (or its signal); `/bug` fails with an ordinary error; anything else answers its client key.
 */
function work() {
  const gates: (() => void)[] = [];
  const started: string[] = [];
  const stopped = (ctx: RequestContext) =>
    new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener('abort', () => resolve());
    });
  const run = async (path: string, ctx: RequestContext): Promise<string> => {
    started.push(path);
    if (path.startsWith('/stop-return')) {
      await stopped(ctx);
      return 'stopped';
    }
    if (path.startsWith('/stop-throw')) {
      await stopped(ctx);
      throw new DeadlineExceededError();
    }
    if (path.startsWith('/hold')) {
      await Promise.race([stopped(ctx), new Promise<void>((resolve) => gates.push(resolve))]);
      return 'held';
    }
    if (path.startsWith('/bug')) throw new Error('a bug, not overload');
    return ctx.key;
  };
  return { run, started, releaseAll: () => gates.splice(0).forEach((f) => f()) };
}

/** Counts the server's closed sockets, so a test knows the server has seen a client leave. */
function closedSockets(server: Server): () => number {
  let closed = 0;
  server.on('connection', (socket) => socket.on('close', () => closed++));
  return () => closed;
}

/** A quota store that answers only when the test lets it: a remote store taking its time. */
function gatedStore(clock: VirtualClock) {
  const inner = memoryRateStore({ clock });
  const waiting: (() => void)[] = [];
  let gated = false;
  const store: RateStore<Promise<RateDecision>> = {
    take: (key, n, policy) =>
      new Promise((resolve) => {
        const answer = () => resolve(inner.take(key, n, policy));
        if (gated) waiting.push(answer);
        else answer();
      }),
  };
  return {
    store,
    waiting,
    gate: () => void (gated = true),
    open: () => {
      gated = false;
      waiting.splice(0).forEach((f) => f());
    },
  };
}

/**
 * Sends to `path` through `h` and leaves while `gated` decides; lets the store answer once the
 * server has seen the client go.
 */
async function leaveWhileDeciding(
  h: Harness,
  gated: ReturnType<typeof gatedStore>,
  path: string,
): Promise<void> {
  const closed = closedSockets(h.server);
  gated.gate();
  const controller = new AbortController();
  const left = send(h.port, { path, signal: controller.signal }).catch(() => 'gone');
  await until(() => gated.waiting.length === 1);
  controller.abort();
  expect(await left).toBe('gone');
  await until(() => closed() === 1);
  gated.open();
}

const names = Object.keys(adapters) as (keyof typeof adapters)[];

describe.each(names)('adversarial clients against %s', (name) => {
  const start = async (options: AdmissionOptions, w: ReturnType<typeof work>) => {
    const h = await adapters[name]({ penaltyBox: false, ...options }, w.run);
    running.push(h);
    return h;
  };

  it('forty requests with Spillway-Deadline: 2 leave an adaptive limit where it was', async () => {
    const clock = createVirtualClock();
    const limit = touchyLimit(clock);
    const w = work();
    const h = await start({ clock, limit, maxQueue: 0 }, w);
    const short = { 'spillway-deadline': '2' };
    const attack = Array.from({ length: 40 }, (_, i) =>
      send(h.port, { path: i % 2 === 0 ? '/stop-return' : '/stop-throw', headers: short }),
    );
    await until(() => h.stats()?.active === 40);
    await clock.advance(2);
    const answers = await Promise.all(attack);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
    // A deadline the client chose and spent: `never`, retrying will not help.
    expect(answers.filter((a) => a.headers['spillway-retry'] === 'never')).toHaveLength(20);
    await until(() => h.inflight() === 0);
    expect(limit.current).toBe(40);
    expect(h.stats()).toEqual({ active: 0, queued: 0, limit: 40 });

    // Ten honest clients at once all get through.
    const honest = Array.from({ length: 10 }, () => send(h.port, { path: '/hold' }));
    await until(() => h.stats()?.active === 10);
    w.releaseAll();
    expect((await Promise.all(honest)).map((a) => a.status)).toEqual(Array(10).fill(200));
  });

  it('the route’s own deadline passing still counts as a drop', async () => {
    const clock = createVirtualClock();
    const limit = touchyLimit(clock);
    const w = work();
    const h = await start({ clock, limit, deadlineMs: 2 }, w);
    const requests = Array.from({ length: 4 }, () => send(h.port, { path: '/stop-return' }));
    await until(() => h.stats()?.active === 4);
    await clock.advance(2);
    await Promise.all(requests);
    await until(() => h.inflight() === 0);
    expect(limit.current).toBeLessThan(40);
  });

  it('clients that disconnect mid-work leave an adaptive limit where it was', async () => {
    const clock = createVirtualClock();
    const limit = touchyLimit(clock);
    const w = work();
    const h = await start({ clock, limit }, w);
    const controllers = Array.from({ length: 20 }, () => new AbortController());
    const gone = controllers.map((c, i) =>
      send(h.port, {
        path: i % 2 === 0 ? '/stop-return' : '/stop-throw',
        signal: c.signal,
      }).catch(() => 'gone'),
    );
    await until(() => h.stats()?.active === 20);
    for (const c of controllers) c.abort();
    expect(await Promise.all(gone)).toEqual(Array(20).fill('gone'));
    await until(() => h.inflight() === 0);
    expect(limit.current).toBe(40);
    expect(h.stats()).toEqual({ active: 0, queued: 0, limit: 40 });
  });

  it('failures that are not overload, and hostile header values, leave it where it was', async () => {
    const clock = createVirtualClock();
    const limit = touchyLimit(clock);
    const w = work();
    const h = await start({ clock, limit, onError: () => undefined }, w);
    for (let i = 0; i < 5; i++) expect((await send(h.port, { path: '/bug' })).status).toBe(500);
    for (const value of ['-1', 'NaN', '1e309', 'x'.repeat(4_000), 'critical-plus, critical']) {
      const headers = {
        'spillway-deadline': value,
        'spillway-criticality': value,
        'spillway-attempt': value,
      };
      expect((await send(h.port, { path: '/key', headers })).status).toBe(200);
    }
    await until(() => h.inflight() === 0);
    expect(limit.current).toBe(40);
  });

  it('seventy copies of a victim’s address in X-Forwarded-For charge the attacker, not the victim', async () => {
    const w = work();
    const h = await start(
      {
        clock: createVirtualClock(),
        trustProxy: 1,
        quota: { ratePerSec: 1, burst: 2, name: 'per-client' },
      },
      w,
    );
    const victim = '203.0.113.50';
    const attacker = '198.51.100.7';
    // What the one trusted proxy forwards: the client's header, then the address it saw.
    const forged = `${Array<string>(70).fill(victim).join(', ')}, ${attacker}`;
    const attack: Answer[] = [];
    for (let i = 0; i < 4; i++)
      attack.push(await send(h.port, { headers: { 'x-forwarded-for': forged } }));
    expect(attack.map((a) => a.status)).toEqual([200, 200, 429, 429]);
    expect(attack[0]!.body).toBe(attacker);
    // A long run of padding does not push the proxy's entry out of reach either.
    const padded = `${'x'.repeat(3_000)}, ${attacker}`;
    expect((await send(h.port, { headers: { 'x-forwarded-for': padded } })).status).toBe(429);
    const own = await send(h.port, { headers: { 'x-forwarded-for': victim } });
    expect([own.status, own.body]).toEqual([200, victim]);
    // Text that is not an address, where the proxy's entry should be, is nobody's key.
    const junk = await send(h.port, { headers: { 'x-forwarded-for': 'ZZZZnotAnAddress' } });
    expect([junk.status, junk.body]).toEqual([200, '127.0.0.1']);
  });

  it('a client that leaves while a remote quota store decides is not admitted', async () => {
    const clock = createVirtualClock();
    const gated = gatedStore(clock);
    const w = work();
    const h = await start(
      { clock, limit: 2, maxQueue: 0, quota: { ratePerSec: 100, burst: 100, store: gated.store } },
      w,
    );
    await leaveWhileDeciding(h, gated, '/hold');
    expect((await send(h.port, { path: '/after' })).status).toBe(200);
    expect(w.started).toEqual(['/after']);
    await until(() => h.inflight() === 0);
    expect(h.stats()).toMatchObject({ active: 0, queued: 0 });
  });

  it('a client that leaves while a remote quota store decides never joins the line', async () => {
    const clock = createVirtualClock();
    const gated = gatedStore(clock);
    const w = work();
    const h = await start(
      {
        clock,
        limit: 1,
        maxQueue: 1,
        maxQueueWaitMs: 60_000,
        quota: { ratePerSec: 100, burst: 100, store: gated.store },
      },
      w,
    );
    const holder = send(h.port, { path: '/hold' });
    await until(() => h.stats()?.active === 1);
    await leaveWhileDeciding(h, gated, '/late');
    // Its decision has come back: a client already gone takes no place in the line.
    await new Promise((r) => setImmediate(r));
    expect(h.stats()?.queued).toBe(0);
    w.releaseAll();
    expect((await holder).status).toBe(200);
    expect((await send(h.port, { path: '/after' })).status).toBe(200);
    expect(w.started).toEqual(['/hold', '/after']);
    await until(() => h.inflight() === 0);
  });

  it('a key function that throws is answered 500 and told to onError; the server goes on', async () => {
    const errors: unknown[] = [];
    const w = work();
    const h = await start(
      {
        clock: createVirtualClock(),
        quota: { ratePerSec: 100, burst: 100 },
        key: (req) => {
          if (req.headers['x-client-id'] === undefined) throw new Error('no client id');
          return String(req.headers['x-client-id']);
        },
        onError: (error) => errors.push(error),
      },
      w,
    );
    for (let i = 0; i < 2; i++) {
      const r = await send(h.port);
      expect([r.status, r.headers['content-type']]).toEqual([500, 'application/problem+json']);
      expect(r.json()).toEqual({
        type: 'about:blank',
        title: 'Internal Server Error',
        status: 500,
        detail: 'The request failed on the server.',
      });
    }
    expect(errors.map((e) => (e as Error).message)).toEqual(['no client id', 'no client id']);
    const ok = await send(h.port, { headers: { 'x-client-id': 'c1' } });
    expect([ok.status, ok.body]).toEqual([200, 'c1']);
    expect(w.started).toEqual(['/']);
    expect(h.inflight()).toBe(0);
  });
});
