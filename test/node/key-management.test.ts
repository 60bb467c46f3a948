// The node:http guard over real sockets on a virtual clock: key management on a route's quota
// (guard.quota(route)), suspension and lifting (guard.suspend / guard.lift, and the ladder's
// last step), and the onRefused / onEscalated hooks — including hooks that throw, which are
// told to onError and never change an answer.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  admission,
  type AdmissionOptions,
  type EscalatedInfo,
  type RefusedInfo,
} from '../../src/node/index.js';
import { penaltyBox, SpillwayConfigError } from '../../src/index.js';
import { createVirtualClock, type VirtualClock } from '../../src/testing/index.js';
import { close, listen, send } from '../helpers/http.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

/** A guard keyed by the `x-client` header, answering 200 to whatever it admits. */
async function start(options: AdmissionOptions, clock: VirtualClock = createVirtualClock()) {
  const guard = admission({
    clock,
    key: (req) => req.headers['x-client'] as string | undefined,
    ...options,
  });
  const server = createServer(guard.handle((_req, res) => void res.end('ok')));
  servers.push(server);
  const port = await listen(server);
  const as = (client: string, path = '/') => send(port, { path, headers: { 'x-client': client } });
  return { guard, clock, as };
}

/** The problem type's last part, or `ok` for an answer that is not a refusal. */
const typeOf = (r: { status: number; json<T>(): T }) =>
  r.status === 200 ? 'ok' : r.json<{ type: string }>().type.split(/[#:]/).pop();

describe('guard.quota(route): key management', () => {
  it('penalize refuses until the debt is paid, reward and reset give tokens back', async () => {
    const { guard, clock, as } = await start({ quota: { ratePerSec: 10, burst: 2 } });
    const keys = guard.quota()!;
    expect(await keys.get('a')).toEqual([
      { policy: 'default', remaining: 2, limit: 2, retryAfterMs: 0, resetMs: 0 },
    ]);
    // 2 - 5: a debt of 3, one token 400 ms away.
    expect((await keys.penalize('a', 5))[0]).toMatchObject({ remaining: 0, retryAfterMs: 400 });
    expect((await as('a')).status).toBe(429);
    expect((await as('b')).status).toBe(200); // nobody else pays
    await clock.advance(400);
    expect((await as('a')).status).toBe(200);
    expect((await as('a')).status).toBe(429);
    expect((await keys.reward('a', 1))[0]!.remaining).toBe(1);
    expect((await as('a')).status).toBe(200);
    await keys.reset('a');
    expect((await as('a')).status).toBe(200);
    expect((await as('a')).status).toBe(200);
    expect((await as('a')).status).toBe(429);
  });

  it('acts on every policy of a route', async () => {
    const { guard, as } = await start({
      routes: [
        {
          match: '/api',
          quota: [
            { name: 'burst', ratePerSec: 10, burst: 5 },
            { name: 'hourly', perWindow: 100, windowMs: 3_600_000 },
          ],
        },
      ],
    });
    expect(guard.quota()).toBeUndefined(); // the default route has no quota
    expect(guard.quota('nope')).toBeUndefined();
    const keys = guard.quota('/api')!;
    expect((await as('a', '/api')).status).toBe(200);
    const after = await keys.penalize('a', 4);
    expect(after.map((s) => [s.policy, s.remaining])).toEqual([
      ['burst', 0],
      ['hourly', 95],
    ]);
    expect((await as('a', '/api')).status).toBe(429);
    await keys.reset('a');
    expect((await keys.get('a')).map((s) => s.remaining)).toEqual([5, 100]);
  });

  it('numbers from a function are known once the route has served the key', async () => {
    const { guard, as } = await start({
      quota: { ratePerSec: 1, burst: ({ key }) => (key === 'gold' ? 10 : 2) },
    });
    const keys = guard.quota()!;
    await expect(keys.get('gold')).rejects.toThrow(/a client this route has served/);
    await keys.reset('gold'); // nothing to forget
    expect((await as('gold')).status).toBe(200);
    expect((await keys.get('gold'))[0]).toMatchObject({ remaining: 9, limit: 10 });
    await keys.penalize('gold', 9);
    expect((await as('gold')).status).toBe(429);
  });
});

describe('suspension', () => {
  it('guard.suspend refuses every request (429, never, no Retry-After) until guard.lift', async () => {
    const { guard, as } = await start({ quota: { ratePerSec: 10, burst: 10 } });
    await guard.suspend('tenant-3');
    const r = await as('tenant-3');
    expect(r.status).toBe(429);
    expect(typeOf(r)).toBe('client-suspended');
    expect(r.headers['spillway-retry']).toBe('never');
    expect(r.headers['retry-after']).toBeUndefined();
    expect((await as('tenant-4')).status).toBe(200);
    await guard.lift('tenant-3');
    expect((await as('tenant-3')).status).toBe(200);
  });

  it('the ladder’s last step suspends a client that keeps ignoring 429s', async () => {
    const { guard, clock, as } = await start({
      quota: { ratePerSec: 1, burst: 1 },
      penaltyBox: {
        graceMs: 0,
        threshold: 2,
        windowMs: 1_000,
        steps: [{ waitMs: 1_000 }, { suspend: true }],
      },
    });
    const seen: string[] = [];
    for (let i = 0; i < 8; i++) {
      seen.push(typeOf(await as('greedy')) ?? '?');
      await clock.advance(10);
    }
    expect(seen).toEqual([
      'ok',
      'quota-exceeded', // told to wait a second
      'quota-exceeded', // back early: a violation
      'abnormal-usage-detected', // the second: step 1, an enforced second
      'abnormal-usage-detected', // back during it: a violation
      'client-suspended', // the second: the last step
      'client-suspended',
      'client-suspended',
    ]);
    await clock.advance(86_400_000);
    expect(typeOf(await as('greedy'))).toBe('client-suspended');
    await guard.lift('greedy');
    await clock.advance(1_000);
    expect((await as('greedy')).status).toBe(200);
  });

  it('without a penalty box, suspend and lift reject naming the option', async () => {
    const { guard } = await start({ penaltyBox: false });
    await expect(guard.suspend('a')).rejects.toBeInstanceOf(SpillwayConfigError);
    await expect(guard.lift('a')).rejects.toThrow(/`penaltyBox`/);
  });

  it('closes the health gate of a box it made, and no other', () => {
    const clock = createVirtualClock();
    const liftWhen = { load: () => 0, healthyAt: 1 };
    const made = admission({ clock, penaltyBox: { liftWhen } });
    expect(clock.pendingTimers).toBe(1);
    made.close();
    expect(clock.pendingTimers).toBe(0);
    const mine = penaltyBox({ clock, liftWhen });
    admission({ clock, penaltyBox: mine }).close();
    expect(clock.pendingTimers).toBe(1);
    mine.close();
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('hooks', () => {
  it('onRefused hears every refusal with its reason, route, key and wait', async () => {
    const refused: Omit<RefusedInfo, 'req'>[] = [];
    const { as } = await start({
      quota: { ratePerSec: 1, burst: 1 },
      onRefused: ({ req, ...info }) => {
        expect(req.headers['x-client']).toBe(info.key);
        refused.push(info);
      },
    });
    expect((await as('a')).status).toBe(200);
    expect((await as('a')).status).toBe(429);
    expect(refused).toEqual([
      {
        reason: 'quota',
        status: 429,
        route: 'default',
        key: 'a',
        retryAfterMs: 1_000,
      },
    ]);
  });

  it('onEscalated hears a move up once, with the request that caused it', async () => {
    const escalated: EscalatedInfo[] = [];
    const { clock, as } = await start({
      quota: { ratePerSec: 1, burst: 1 },
      penaltyBox: { graceMs: 0, threshold: 2, windowMs: 1_000, steps: [{ waitMs: 5_000 }] },
      onEscalated: (info) => escalated.push(info),
    });
    for (let i = 0; i < 6; i++) {
      await as('greedy');
      await clock.advance(10);
    }
    expect(escalated).toHaveLength(1);
    expect(escalated[0]).toMatchObject({ key: 'greedy', step: 1, previous: 0, suspended: false });
    expect(escalated[0]!.req.headers['x-client']).toBe('greedy');
  });

  it('a hook that throws is told to onError with the request; the answer stands', async () => {
    const errors: [string, string | undefined][] = [];
    const { clock, as } = await start({
      quota: { ratePerSec: 1, burst: 1 },
      penaltyBox: { graceMs: 0, threshold: 2, windowMs: 1_000, steps: [{ waitMs: 5_000 }] },
      onRefused: () => {
        throw new Error('refused hook');
      },
      onEscalated: () => {
        throw new Error('escalated hook');
      },
      onError: (error: unknown, req: IncomingMessage) =>
        errors.push([(error as Error).message, req.headers['x-client'] as string | undefined]),
    });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await as('greedy')).status);
      await clock.advance(10);
    }
    expect(statuses).toEqual([200, 429, 429, 429, 429, 429]);
    expect(errors.filter(([m]) => m === 'refused hook')).toHaveLength(5);
    expect(errors).toContainEqual(['escalated hook', 'greedy']);
  });

  it('refuses hooks that are not functions, by name', () => {
    expect(() => admission({ onRefused: 1 as never })).toThrow(/`onRefused`/);
    expect(() => admission({ onEscalated: 'x' as never })).toThrow(/`onEscalated`/);
    expect(() => admission({ penaltyBox: 3 as never })).toThrow(/`penaltyBox`/);
  });
});
