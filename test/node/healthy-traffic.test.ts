// Healthy traffic is never refused: the guard against a healthy server, with real sockets on
// 127.0.0.1, in shapes an operator's own clients take — a burst after a slow spell, a page's
// parallel requests a little over the quota. A protection acts on evidence about now: an
// estimate from a spell that is over, or requests already on their way when a refusal was
// written, must not turn away work the server can do.
import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { admission, type AdmissionOptions } from '../../src/node/index.js';
import { close, listen, send } from '../helpers/http.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

/** A guarded server whose handler takes `serviceMs.value` ms. */
async function guarded(options: AdmissionOptions, serviceMs: { value: number }) {
  const guard = admission({ penaltyBox: false, ...options });
  const server = createServer(
    guard.handle(async (_req, res) => {
      await sleep(serviceMs.value);
      res.end('ok');
    }),
  );
  servers.push(server);
  return { guard, port: await listen(server) };
}

describe('healthy traffic is never refused', () => {
  it('after a slow spell, short deadlines are served once the work is quick again', async () => {
    const serviceMs = { value: 200 };
    const { port } = await guarded(
      { limit: 2, maxQueue: 10, maxQueueWaitMs: 5_000, deadlineMs: 5_000 },
      serviceMs,
    );
    // The slow spell: six callers in a closed loop, so a line stands and its wait is measured.
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let i = 0; i < 2; i++) expect((await send(port)).status).toBe(200);
      }),
    );
    serviceMs.value = 5;
    const refused: number[] = [];
    for (let burst = 0; burst < 10; burst++) {
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => send(port, { headers: { 'spillway-deadline': '150' } })),
      );
      refused.push(...answers.filter((a) => a.status !== 200).map((a) => a.status));
    }
    expect(refused).toEqual([]);
  });

  it("a page's parallel requests a little over the quota are refused once, never escalated", async () => {
    const { port } = await guarded(
      { quota: { ratePerSec: 5, burst: 10 }, penaltyBox: {} },
      { value: 1 },
    );
    // One page load: 16 requests at once from one client.
    const page = await Promise.all(Array.from({ length: 16 }, () => send(port)));
    const refusals = page.filter((a) => a.status !== 200);
    expect(refusals.length).toBeGreaterThan(0);
    for (const r of refusals) {
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('1');
    }
    // The client waits the second it was told, then asks at 2 req/s: under its quota.
    await sleep(1_100);
    for (let i = 0; i < 6; i++) {
      expect((await send(port)).status).toBe(200);
      await sleep(500);
    }
  });
});
