// A dependency's cap can be an adaptive limit: its attempts feed the limit, and a callee that
// answers 503 (or times out) counts as a drop, so the cap backs off; successes let it grow.
import { afterEach, describe, expect, it } from 'vitest';
import { dependency } from '../../src/client/index.js';
import { aimdLimit } from '../../src/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { startServer, type TestServer } from './servers.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('dependency({ limit: adaptive })', () => {
  it('backs off while the callee refuses, and leaves the limit alone on local refusals', async () => {
    let refusing = true;
    const server = await startServer((_req, res) => {
      res.writeHead(refusing ? 503 : 200, { 'content-type': 'text/plain' });
      res.end(refusing ? 'busy' : 'ok');
    });
    servers.push(server);
    // Windows close on every sample here so each attempt moves the limit.
    const limit = aimdLimit({
      initialLimit: 40,
      minLimit: 5,
      maxLimit: 100,
      minWindowMs: 0,
      maxWindowMs: 0,
      minWindowSamples: 1,
      clock: createVirtualClock(),
    });
    const dep = dependency({
      name: 'callee',
      baseUrl: server.url,
      limit,
      retry: { maxAttempts: 1 },
      breaker: false,
      throttle: false,
    });
    for (let i = 0; i < 6; i++) await dep.fetch('/').catch(() => undefined);
    const backedOff = limit.current;
    expect(backedOff).toBeLessThan(40 * 0.9 ** 3);
    refusing = false;
    for (let i = 0; i < 6; i++) await dep.fetch('/').then((r) => r.text());
    expect(limit.current).toBeGreaterThanOrEqual(backedOff);
    // A call the caller aborts before it is sent says nothing about the callee.
    const before = limit.current;
    const aborted = new AbortController();
    aborted.abort();
    await dep.call(() => 'never', { signal: aborted.signal }).catch(() => undefined);
    expect(limit.current).toBe(before);
  });
});
