// The guard's channels (src/channels) over real sockets, on a virtual clock: a client that
// leaves while in line is published as abandoned, the client key only with publishKey, the
// penalty ladder's steps, an adaptive limit's moves named by route, and the tracing channel's
// order when the handler throws or rejects. (What otelMetrics makes of them is in test/otel.)
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  channelNames,
  requestChannel,
  type AdmissionMessage,
  type PenaltyMessage,
} from '../../src/channels/index.js';
import { aimdLimit } from '../../src/index.js';
import { admission, type AdmissionOptions, type AdmittedHandler } from '../../src/node/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, listen, send, until } from '../helpers/http.js';

const undo: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const u of undo.splice(0).reverse()) await u();
});

function collect<T>(name: string): T[] {
  const seen: T[] = [];
  const listener = (m: unknown): void => void seen.push(m as T);
  subscribe(name, listener);
  undo.push(() => void unsubscribe(name, listener));
  return seen;
}

async function serve(options: AdmissionOptions, handler: AdmittedHandler) {
  const guard = admission({ penaltyBox: false, clock: createVirtualClock(), ...options });
  const server: Server = createServer(guard.handle(handler));
  const port = await listen(server);
  undo.push(async () => {
    guard.close();
    await close(server);
  });
  return { guard, port };
}

describe('the guard’s decision channels', () => {
  it('a client that leaves while in line is published as abandoned, after its wait', async () => {
    const seen = collect<AdmissionMessage>(channelNames.admission);
    const holds: (() => void)[] = [];
    const { guard, port } = await serve({ limit: 1, maxQueue: 1 }, async (_req, res) => {
      await new Promise<void>((r) => holds.push(r));
      res.end();
    });
    const first = send(port);
    await until(() => holds.length === 1);
    const leaving = new AbortController();
    const second = send(port, { signal: leaving.signal }).catch(() => 'left');
    await until(() => guard.stats()!.queued === 1);
    leaving.abort();
    expect(await second).toBe('left');
    await until(() => seen.length === 2);
    holds[0]!();
    await first;
    expect(seen.map((m) => [m.result, m.queued])).toEqual([
      ['admitted', false],
      ['abandoned', true],
    ]);
    expect(seen[1]).toMatchObject({ capacityFree: false, status: undefined });
    expect('key' in seen[0]!).toBe(false);
  });

  it('carries the client key only with publishKey', async () => {
    const seen = collect<AdmissionMessage>(channelNames.admission);
    const quiet = await serve({ key: () => 'k1' }, (_req, res) => void res.end());
    const open = await serve({ key: () => 'k2', publishKey: true }, (_req, res) => void res.end());
    await send(quiet.port);
    await send(open.port);
    expect(seen.map((m) => m.key)).toEqual([undefined, 'k2']);
  });

  it('publishes the penalty ladder’s steps, the key only with publishKey', async () => {
    const seen = collect<PenaltyMessage>(channelNames.penalty);
    for (const publishKey of [false, true]) {
      const { port } = await serve(
        {
          publishKey,
          key: () => 'greedy',
          quota: { ratePerSec: 0.001, burst: 1 },
          penaltyBox: { threshold: 2, graceMs: 0 },
        },
        (_req, res) => void res.end(),
      );
      // One admitted, then 429s: coming back before Retry-After is a violation.
      for (let i = 0; i < 4; i++) await send(port);
    }
    expect(seen).toEqual([
      { step: 1, previous: 0 },
      { step: 1, previous: 0, key: 'greedy' },
    ]);
  });

  it('publishes a route’s adaptive limit moving, until the guard is closed', () => {
    const seen = collect<{ route: string; previous: number }>(channelNames.limit);
    const clock = createVirtualClock();
    const limit = aimdLimit({ initialLimit: 5, minLimit: 1, maxLimit: 10, clock });
    const guard = admission({
      clock,
      penaltyBox: false,
      routes: [{ match: '/a', name: 'a', limit }],
    });
    // A window of drops, closed on the clock: the limit backs off once.
    const drop = () => {
      for (let i = 0; i < 12; i++) {
        limit.onSample({ rttMs: 10, inflight: 5, dropped: true });
        clock.advanceSync(100);
      }
    };
    drop();
    expect(seen.map((m) => [m.route, m.previous])).toEqual([['a', 5]]);
    guard.close();
    drop();
    expect(seen).toHaveLength(1);
  });

  it('traces the handler: error before end when it throws, before asyncStart when it rejects', async () => {
    const events: string[] = [];
    const on = (name: string) => (m: { error?: unknown }) =>
      void events.push(m.error === undefined ? name : `${name}!`);
    const subscribers = {
      start: on('start'),
      end: on('end'),
      asyncStart: on('asyncStart'),
      asyncEnd: on('asyncEnd'),
      error: on('error'),
    };
    requestChannel.subscribe(subscribers);
    undo.push(() => void requestChannel.unsubscribe(subscribers));
    const { port } = await serve({ onError: () => undefined }, (req) => {
      if (req.url === '/throw') throw new Error('at once');
      return Promise.reject(new Error('later'));
    });
    expect((await send(port, { path: '/throw' })).status).toBe(500);
    expect(events.splice(0)).toEqual(['start', 'error!', 'end!']);
    expect((await send(port, { path: '/reject' })).status).toBe(500);
    expect(events).toEqual(['start', 'end', 'error!', 'asyncStart!', 'asyncEnd!']);
  });
});
