// The reference server's slow path (`--slow-ms`) and tenant shares (`--tenant-share`) over real
// sockets, as the demo's slots scenario uses them: a client's slow queries hold its slots, the
// bounded server with shares lets it hold only its share (and serves the others beside it),
// and /stats counts the most slow queries each client had running at once.
import { afterEach, describe, expect, it } from 'vitest';
import {
  startReferenceServer,
  type ReferenceOptions,
  type ReferenceServer,
} from '../../src/cli/serve/servers.js';
import { send } from '../helpers/http.js';

const base: ReferenceOptions = {
  mode: 'bounded',
  framework: 'node',
  work: 'db',
  connections: 10,
  serviceMs: 30,
  clientRatePerSec: 150,
  clientBurst: 15,
};

let server: ReferenceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: Partial<ReferenceOptions>): Promise<number> {
  server = await startReferenceServer({ ...base, ...options }, { port: 0, host: '127.0.0.1' });
  return server.port;
}

/** Sends `n` slow requests of `client` at once; their statuses, sorted. */
async function slowBurst(port: number, client: string, n: number): Promise<number[]> {
  const answers = await Promise.all(
    Array.from({ length: n }, () =>
      send(port, { path: '/slow', headers: { 'x-client-id': client } }),
    ),
  );
  return answers.map((a) => a.status).sort();
}

interface Stats {
  slow?: { slowMs: number; inFlight: number; peakByClient: Record<string, number> };
}

describe('spillway serve: the slow path and tenant shares', () => {
  it('with shares, a client holds its share of the slots and the others are served beside it', async () => {
    // 400 ms queries: long enough that all five arrive while the first hold their slots, and
    // within the bounded server's 1 s deadline.
    const port = await start({ slowMs: 400, tenantShare: 0.3 });
    const t0 = performance.now();
    const [statuses, polite] = await Promise.all([
      slowBurst(port, 'holder', 5),
      send(port, { path: '/work', headers: { 'x-client-id': 'polite' } }),
    ]);
    expect(statuses).toEqual([200, 200, 200, 503, 503]);
    expect(polite.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(390); // the slow ones were slow
    const stats = (await send(port, { path: '/stats' })).json<Stats>();
    expect(stats.slow).toEqual({
      slowMs: 400,
      inFlight: 0,
      peakByClient: { holder: 3 },
      untracked: 0,
    });
  });

  it('a refusal over the share says why, and is a 503 the client may retry', async () => {
    const port = await start({ slowMs: 400, tenantShare: 0.1 }); // one slot
    const answers = await Promise.all(
      [0, 1].map(() => send(port, { path: '/slow', headers: { 'x-client-id': 'holder' } })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 503]);
    const refused = answers.find((a) => a.status === 503)!;
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body).toContain("share of the route's slots");
  });

  it('without shares the same client takes every slot it asks for', async () => {
    const port = await start({ slowMs: 400 });
    expect(await slowBurst(port, 'holder', 5)).toEqual([200, 200, 200, 200, 200]);
    const stats = (await send(port, { path: '/stats' })).json<Stats>();
    expect(stats.slow?.peakByClient).toEqual({ holder: 5 });
  });

  it('the bare bulkhead has a slow path too; without --slow-ms, /slow is any path', async () => {
    const bulkheadPort = await start({ mode: 'bulkhead', slowMs: 400 });
    expect(await slowBurst(bulkheadPort, 'holder', 3)).toEqual([200, 200, 200]);
    const counted = (await send(bulkheadPort, { path: '/stats' })).json<Stats>();
    expect(counted.slow?.peakByClient).toEqual({ holder: 3 });
    await server?.close();
    const port = await start({ mode: 'naive' });
    const t0 = performance.now();
    expect((await send(port, { path: '/slow' })).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(390);
    expect((await send(port, { path: '/stats' })).json<Stats>().slow).toBeUndefined();
  });
});
