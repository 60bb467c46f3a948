import { describe, expect, it } from 'vitest';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { resolveOptions, type LoadOptions } from './options.js';

const url = 'http://127.0.0.1:8080/work';

describe('resolveOptions', () => {
  it('fills every default for a single-rate run', () => {
    const o = resolveOptions({ url, ratePerSec: 500, durationMs: 5000 });
    expect(o).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      connection: 'keep-alive',
      // 500/s held for the whole 10 s default deadline, × 1.25, + 32
      maxConnections: 6282,
      maxInFlight: 12_564,
      // 100 ms of arrivals + 4: what a server that stalls for 100 ms leaves waiting
      warmConnections: 54,
      // a new connection per arrival twice over, in bursts of at most 128
      maxNewConnectionsPerSec: 1000,
      connectBurst: 128,
      drainMs: 11_000,
      label: 'http://127.0.0.1:8080/work',
      validity: { maxLagP99Ms: 5, maxCpuPercent: 90, maxDroppedFraction: 0 },
    });
    expect(o.groups).toHaveLength(1);
    expect(o.groups[0]).toMatchObject({
      name: 'default',
      arrival: 'constant',
      method: 'GET',
      path: '/work',
      deadlineMs: 10_000,
      goodWithinMs: 10_000,
      retry: { kind: 'none' },
    });
    expect(o.groups[0]!.requests[0]!.toString()).toBe(
      'GET /work HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n',
    );
  });

  it('groups inherit the run defaults and override them', () => {
    const o = resolveOptions({
      url,
      durationMs: 5000,
      deadlineMs: 1000,
      headers: { 'x-run': '1' },
      series: 'bounded',
      scenario: 'greedy',
      groups: [
        { name: 'greedy', ratePerSec: 400, headers: { 'x-client': 'greedy' } },
        { name: 'polite', ratePerSec: 100, clients: 100, headers: { 'x-client': 'p{client}' } },
        { name: 'next', ratePerSec: 1, startMs: 5000, maxRequests: 1, deadlineMs: 0 },
      ],
    });
    expect(o.label).toBe('bounded · greedy');
    expect(o.groups[2]!.durationMs).toBe(1000); // starts at the end: long enough for its one request
    expect(o.groups[1]!.requests).toHaveLength(100);
    expect(o.groups[1]!.requests[42]!.toString()).toContain('x-client: p42\r\n');
    expect(o.groups[1]!.requests[42]!.toString()).toContain('x-run: 1\r\n');
    expect(o.groups[2]).toMatchObject({ deadlineMs: 0, goodWithinMs: Infinity, maxRequests: 1 });
  });

  it("a group's header replaces the run's of the same name, whatever its case", () => {
    const o = resolveOptions({
      url,
      durationMs: 1,
      headers: { 'X-Client': 'run', 'x-run': '1' },
      groups: [{ ratePerSec: 1, headers: { 'x-client': 'group' } }],
    });
    expect(o.groups[0]!.requests[0]!.toString()).toBe(
      'GET /work HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nx-run: 1\r\nx-client: group\r\n\r\n',
    );
  });

  it('bounds new connections by the rate, at most 5000/s, and not at all per request', () => {
    expect(resolveOptions({ url, ratePerSec: 20_000, durationMs: 1 })).toMatchObject({
      warmConnections: 2004,
      maxNewConnectionsPerSec: 5000,
      connectBurst: 128,
    });
    expect(resolveOptions({ url, ratePerSec: 10, durationMs: 1 })).toMatchObject({
      warmConnections: 5,
      maxNewConnectionsPerSec: 20,
      connectBurst: 20,
    });
    expect(
      resolveOptions({ url, ratePerSec: 10, durationMs: 1, maxNewConnectionsPerSec: Infinity }),
    ).toMatchObject({ maxNewConnectionsPerSec: Infinity });
    expect(resolveOptions({ url, ratePerSec: 10, durationMs: 1, connection: 'new' })).toMatchObject(
      { warmConnections: 0, maxNewConnectionsPerSec: Infinity },
    );
  });

  it('refuses bad options, naming the option and the value', () => {
    const cases: [Parameters<typeof resolveOptions>[0], RegExp][] = [
      [{ url: 'ftp://x/', ratePerSec: 1, durationMs: 1 }, /`url` to be an http:\/\/ URL/],
      [{ url: 'not a url', ratePerSec: 1, durationMs: 1 }, /`url` to be an absolute http/],
      [
        { url, ratePerSec: 0, durationMs: 1 },
        /`ratePerSec` to be a finite number greater than 0, got 0/,
      ],
      [{ url, ratePerSec: 1, durationMs: -5 }, /`durationMs`/],
      [
        { url, ratePerSec: 1, durationMs: 1, arrival: 'bursty' as 'poisson' },
        /`arrival` to be one of 'constant', 'poisson', got "bursty"/,
      ],
      [{ url, durationMs: 1, groups: [] }, /`groups` to be an array of 1 to 1000 groups/],
      [
        { url, ratePerSec: 1, durationMs: 1, groups: [{ ratePerSec: 1 }] },
        /`ratePerSec` to be absent/,
      ],
      [
        {
          url,
          durationMs: 1,
          groups: [
            { name: 'a', ratePerSec: 1 },
            { name: 'a', ratePerSec: 1 },
          ],
        },
        /`groups\[1\]\.name` to be a unique group name/,
      ],
      [{ url, durationMs: 1, groups: [{ ratePerSec: 1, clients: 0 }] }, /`groups\[0\]\.clients`/],
      [
        {
          url,
          durationMs: 1,
          groups: [{ ratePerSec: 1, retry: { kind: 'immediate', retries: 0 } }],
        },
        /`groups\[0\]\.retry` to be a retry policy/,
      ],
      [
        { url, ratePerSec: 1, durationMs: 1, maxConnections: 0 },
        /`maxConnections` to be a positive integer/,
      ],
      [
        { url, ratePerSec: 1, durationMs: 1, headers: { 'bad name': 'x' } },
        /`headers` to be valid header names/,
      ],
      [
        { url, durationMs: 1, groups: [{ ratePerSec: 1, headers: { 'x-a': 'a\u010db' } }] },
        /`groups\[0\]\.headers\.x-a` to be a header value .* \(U\+010D at index 1 is not allowed\)/,
      ],
      [
        { url, durationMs: 1, groups: [{ ratePerSec: 1, path: '/caf\u00e9' }] },
        /`groups\[0\]\.path` to be a path .* \(U\+00E9 at index 4 is not allowed\)/,
      ],
      [
        { url, ratePerSec: 1, durationMs: 1, method: 'g\u0130t' },
        /`method` to be an HTTP method token \(U\+0130 at index 1 is not allowed\)/,
      ],
      [
        { url, ratePerSec: 1, durationMs: 1, headers: { 'X-A': '1', 'x-a': '2' } },
        /`headers` to be each header name once/,
      ],
      ...(['durationMs', 'warmupMs', 'deadlineMs', 'drainMs', 'idleTimeoutMs'] as const).map(
        (option): [LoadOptions, RegExp] => [
          { url, ratePerSec: 1, durationMs: 1, [option]: 99_999_999_000 },
          new RegExp(`\`${option}\` to be at most 2147483647 ms`),
        ],
      ),
      [
        { url, durationMs: 1, groups: [{ ratePerSec: 1, startMs: 2 ** 31 }] },
        /`groups\[0\]\.startMs` to be at most 2147483647 ms/,
      ],
      [{ url, ratePerSec: 1, durationMs: 1, connection: 'close' as 'new' }, /`connection`/],
      [
        { url, ratePerSec: 1, durationMs: 1, maxNewConnectionsPerSec: 0 },
        /`maxNewConnectionsPerSec` to be a finite number greater than 0, got 0/,
      ],
    ];
    for (const [options, message] of cases) {
      expect(() => resolveOptions(options)).toThrow(SpillwayConfigError);
      expect(() => resolveOptions(options)).toThrow(message);
    }
  });
});
