// Retry-After from a real server, measured on a virtual clock: the client sleeps on the Clock,
// the server stamps each arrival with the same clock, and nothing sleeps for real.
import { afterEach, describe, expect, it } from 'vitest';
import { dependency } from '../../src/client/index.js';
import { DependencyOverloadedError } from '../../src/index.js';
import { createVirtualClock, type VirtualClock } from '../../src/testing/index.js';
import { settleWith, startServer, type TestServer } from './servers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server answering 503 with the given Retry-After on the first request, 200 after. */
async function busyOnce(clock: VirtualClock, retryAfter: string | string[]): Promise<TestServer> {
  server = await startServer(
    (_req, res, n) => {
      if (n === 1) {
        res.setHeader('retry-after', retryAfter);
        res.writeHead(503);
        res.end('busy');
      } else res.end('ok');
    },
    () => clock.now(),
  );
  return server;
}

function client(clock: VirtualClock, url: string) {
  return dependency({ name: 'svc', baseUrl: url, clock, breaker: false, throttle: false });
}

describe('Retry-After', () => {
  it('delta-seconds: the retry comes no sooner than the callee asked', async () => {
    const clock = createVirtualClock();
    const s = await busyOnce(clock, '2');
    const res = await settleWith(client(clock, s.url).fetch('/'), clock);
    expect(await res.text()).toBe('ok');
    expect(s.seen).toHaveLength(2);
    const gap = s.seen[1]!.at - s.seen[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(2_000);
    expect(gap).toBeLessThan(2_000 + 100 + 200); // + jitter (< base) + driving steps
    expect(s.seen.map((r) => r.headers['spillway-attempt'])).toEqual(['1', '2']);
  });

  it('HTTP-date: measured against the clock’s wall time', async () => {
    const clock = createVirtualClock();
    const date = new Date(clock.wallNow() + 3_000).toUTCString();
    const s = await busyOnce(clock, date);
    await settleWith(client(clock, s.url).fetch('/'), clock);
    expect(s.seen).toHaveLength(2);
    expect(s.seen[1]!.at - s.seen[0]!.at).toBeGreaterThanOrEqual(2_000); // dates are whole seconds
  });

  it('hostile values are ignored or clamped: never a negative or endless sleep', async () => {
    const hostile: (string | string[])[] = [
      '-1',
      'abc',
      'Thu, 01 Jan 1970 00:00:00 GMT',
      Array.from({ length: 10 }, (_, i) => String(i + 1)), // ten fields, joined with commas
      '1, 2, 3, 4, 5, 6, 7, 8, 9, 10',
      '1e3',
      '',
    ];
    for (const value of hostile) {
      const clock = createVirtualClock();
      const s = await busyOnce(clock, value);
      const res = await settleWith(client(clock, s.url).fetch('/'), clock);
      expect(res.status).toBe(200);
      const gap = s.seen[1]!.at - s.seen[0]!.at;
      expect(gap, `Retry-After: ${String(value)}`).toBeGreaterThanOrEqual(0);
      expect(gap, `Retry-After: ${String(value)}`).toBeLessThan(1_000);
      await s.close();
      server = undefined;
    }
  });

  it('a wait longer than maxRetryAfterMs (99999999999 s, clamped to a day) is not waited for', async () => {
    const clock = createVirtualClock();
    const s = await busyOnce(clock, '99999999999');
    const error = (await settleWith(client(clock, s.url).fetch('/'), clock).catch(
      (e: unknown) => e,
    )) as DependencyOverloadedError;
    expect(s.seen).toHaveLength(1);
    expect(error).toBeInstanceOf(DependencyOverloadedError);
    expect(error.signal).toBe('later');
    expect(error.retryAfterMs).toBe(86_400_000);
    expect(error.status).toBe(503);
    expect(clock.now()).toBeLessThan(1_000);
  });
});
