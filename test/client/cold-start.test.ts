// A healthy dependency meets a cold client — at process start, after a deploy, after an idle
// spell longer than every window — with a burst as large as the client's cap. Real sockets on
// 127.0.0.1; the server answers every request with 200 after 20 ms. Nothing may be refused
// locally, no breaker may trip, no adaptive limit may shrink: every window that starts empty
// (the throttle's, the breaker's, the ratio budget's, an adaptive limit's) must read a cold
// start as what it is, not as overload.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependency, type Dependency } from '../../src/client/index.js';
import { aimdLimit, gradientLimit, vegasLimit, type AdaptiveLimit } from '../../src/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { startServer, type TestServer } from './servers.js';

let server: TestServer;
beforeAll(async () => {
  await (await fetch('data:,warm')).text();
  server = await startServer((_req, res) => {
    setTimeout(() => res.end('ok'), 20);
  });
});
afterAll(() => server.close());

/** Sends `size` calls at once; the codes of those that failed. */
async function burst(dep: Dependency, size: number): Promise<string[]> {
  const results = await Promise.allSettled(
    Array.from({ length: size }, () => dep.fetch('/').then((r) => r.text())),
  );
  return results.flatMap((r) =>
    r.status === 'rejected' ? [String((r.reason as { code?: string }).code ?? r.reason)] : [],
  );
}

describe('a burst at a cold, healthy dependency', () => {
  for (const size of [8, 16, 32, 64]) {
    it(`of ${size} calls: every one served, nothing throttled`, async () => {
      const dep = dependency({ name: 'cold', baseUrl: server.url });
      expect(await burst(dep, size)).toEqual([]);
      expect(dep.throttle!.rejectProbability()).toBe(0);
      expect(dep.breaker!.state).toBe('closed');
    });
  }

  it('again and again, after idle spells longer than the throttle and breaker windows', async () => {
    // The dependency's clock is virtual, so two minutes of quiet pass at once.
    const clock = createVirtualClock();
    const dep = dependency({ name: 'cold', baseUrl: server.url, clock });
    for (let round = 0; round < 5; round++) {
      expect(await burst(dep, 64)).toEqual([]);
      expect(await burst(dep, 30)).toEqual([]); // a second wave before the window moves
      await clock.advance(130_000);
    }
    expect(dep.throttle!.rejectProbability()).toBe(0);
  });

  it('with the ratio retry budget: nothing to withdraw, nothing refused', async () => {
    const dep = dependency({
      name: 'cold',
      baseUrl: server.url,
      budget: { policy: 'ratio', percentCanRetry: 0.2, minRetriesPerSec: 10, ttlMs: 10_000 },
    });
    expect(await burst(dep, 64)).toEqual([]);
  });

  const limits: [string, () => AdaptiveLimit][] = [
    ['aimdLimit', () => aimdLimit({ initialLimit: 20, minLimit: 1, maxLimit: 200 })],
    ['gradientLimit', () => gradientLimit({ initialLimit: 20, minLimit: 1, maxLimit: 200 })],
    ['vegasLimit', () => vegasLimit({ initialLimit: 20, minLimit: 1, maxLimit: 200 })],
  ];
  for (const [name, make] of limits) {
    it(`under ${name}: the burst waits its turn, and the limit does not shrink`, async () => {
      const limit = make();
      const dep = dependency({ name: 'cold', baseUrl: server.url, limit, maxQueue: 64 });
      expect(await burst(dep, 64)).toEqual([]);
      expect(limit.current).toBeGreaterThanOrEqual(20);
    });
  }
});
