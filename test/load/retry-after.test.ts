// The generator against servers that answer 429 with a Retry-After, on loopback: a hint far past
// the run's end must neither overflow a timer (a 1 ms re-arm loop) nor hold the run open for
// its whole drain; a hint inside the run is still honoured. Bounds are generous: the defect
// made a 1.5 s run last over 40 s.
import { afterEach, describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/http/index.js';
import { runLoad } from '../../src/load/index.js';
import { startServer, type TestServer } from './servers.js';

let server: TestServer | undefined;
const warnings: Error[] = [];
const onWarning = (warning: Error): void => void warnings.push(warning);

afterEach(async () => {
  process.off('warning', onWarning);
  warnings.length = 0;
  await server?.close();
  server = undefined;
});

describe('runLoad and Retry-After', () => {
  it('a Retry-After of 99999999 s ends those callers at once: the run ends on time', async () => {
    process.on('warning', onWarning);
    server = await startServer((_req, res) => {
      res.writeHead(429, { 'retry-after': '99999999', 'content-length': '0' }).end();
    });
    const started = performance.now();
    // The default deadline (10 s) × 4 attempts makes the drain 41 s: the run must not wait it.
    const result = await runLoad({
      url: `${server.url}/`,
      ratePerSec: 5,
      durationMs: 1500,
      retry: { kind: 'backoff', retries: 3 },
    });
    const wallMs = performance.now() - started;
    expect(result.totals.offered).toBeGreaterThan(0);
    expect(result.totals.rejected).toBe(result.totals.offered);
    // Nobody sent again: the hint reaches past the run.
    expect(result.totals.attempts).toBe(result.totals.offered);
    expect(result.elapsedMs).toBeLessThan(6000);
    expect(wallMs).toBeLessThan(10_000);
    expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning')).toEqual([]);
  }, 60_000);

  it('a Retry-After inside the run is honoured: the retry goes, no sooner than the hint', async () => {
    let served = 0;
    const sentAt: number[] = [];
    server = await startServer((_req, res) => {
      sentAt.push(performance.now());
      if (served++ === 0) {
        res.writeHead(429, { 'retry-after': '1', 'content-length': '0' }).end();
      } else res.end('ok');
    });
    const result = await runLoad({
      url: `${server.url}/`,
      ratePerSec: 2,
      durationMs: 1000,
      deadlineMs: 5000,
      retry: { kind: 'backoff', retries: 1 },
    });
    expect(result.totals.ok).toBe(result.totals.offered);
    expect(result.totals.retries).toBe(1);
    expect(sentAt[sentAt.length - 1]! - sentAt[0]!).toBeGreaterThanOrEqual(999);
  });

  it('reads Retry-After with the HTTP codec the client uses: what it cannot read is no hint', async () => {
    for (const value of ['3', 'Sun, 06 Nov 1994 08:49:37 GMT', '2099-01-01T00:00:00Z']) {
      server = await startServer((_req, res) => {
        res.writeHead(429, { 'retry-after': value, 'content-length': '0' }).end();
      });
      const { totals } = await runLoad({ url: `${server.url}/`, ratePerSec: 20, durationMs: 200 });
      const expected = parseRetryAfter(value, Date.now());
      expect(totals.rejected).toBeGreaterThan(0);
      if (expected === undefined) {
        expect(totals.retryAfterMs).toBeUndefined();
        expect(totals.rejectedWithoutRetryAfter).toBe(totals.rejected);
      } else {
        expect(totals.retryAfterMs?.max).toBeCloseTo(expected, -1);
        expect(totals.rejectedWithoutRetryAfter).toBe(0);
      }
      await server.close();
      server = undefined;
    }
  });
});
