import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../load/options.js';
import { UsageError } from './command.js';
import { parseDurationMs, parseGroup, parseLoadArgs } from './load-args.js';
import { progressLine } from './progress.js';

const url = 'http://127.0.0.1:3000/';

describe('parseLoadArgs', () => {
  it('maps flags to load options with defaults', () => {
    const { options, json, reportFile } = parseLoadArgs([url, '--rate', '500', '-d', '5s']);
    expect(options).toMatchObject({
      url,
      ratePerSec: 500,
      durationMs: 5000,
      arrival: 'constant',
      deadlineMs: 10_000,
      method: 'GET',
      headers: {},
      retry: { kind: 'none' },
      connection: 'keep-alive',
      seed: 1,
      warmupMs: 0,
    });
    expect(json).toBe(false);
    expect(reportFile).toBeUndefined();
  });

  it('reads every flag', () => {
    const { options, json, reportFile } = parseLoadArgs([
      url,
      '-r',
      '100',
      '--arrival',
      'poisson',
      '-c',
      '64',
      '--new-connection',
      '--deadline-ms',
      '1000',
      '--slo-ms',
      '250',
      '-H',
      'x-a: 1',
      '--header',
      'Authorization: Bearer a:b',
      '-X',
      'POST',
      '--body',
      '{}',
      '--retry',
      'backoff:3:200',
      '--seed',
      '9',
      '--label',
      'mine',
      '--warmup',
      '2s',
      '--json',
      '--report',
      'out.html',
    ]);
    expect(options).toMatchObject({
      arrival: 'poisson',
      maxConnections: 64,
      connection: 'new',
      deadlineMs: 1000,
      sloMs: 250,
      headers: { 'x-a': '1', Authorization: 'Bearer a:b' },
      method: 'POST',
      body: '{}',
      retry: { kind: 'backoff', retries: 3, baseMs: 200 },
      seed: 9,
      label: 'mine',
      warmupMs: 2000,
    });
    expect(json).toBe(true);
    expect(reportFile).toBe('out.html');
  });

  it('builds groups from name:rate[:key=value...]', () => {
    const { options } = parseLoadArgs([
      url,
      '--group',
      'greedy:400:x-client-id=greedy',
      '-g',
      'polite:100:clients=100:x-client-id=polite-{client}:deadline-ms=500:retry=immediate:2',
    ]);
    expect(options.groups).toEqual([
      { name: 'greedy', ratePerSec: 400, headers: { 'x-client-id': 'greedy' } },
      {
        name: 'polite',
        ratePerSec: 100,
        clients: 100,
        deadlineMs: 500,
        retry: { kind: 'immediate', retries: 2 },
        headers: { 'x-client-id': 'polite-{client}' },
      },
    ]);
    expect(parseGroup('--group', 'canary:1:start=5s:requests=1:path=/health:method=HEAD')).toEqual({
      name: 'canary',
      ratePerSec: 1,
      startMs: 5000,
      maxRequests: 1,
      path: '/health',
      method: 'HEAD',
    });
  });

  it('says which flag and which value are wrong', () => {
    const cases: [string[], string | RegExp][] = [
      [[url], 'missing --rate'],
      [['--rate', '1'], 'missing the target URL'],
      [[url, 'http://other/', '--rate', '1'], 'expected one target URL, got 2'],
      [['https://x/', '--rate', '1'], "<url>: expected an http:// URL, got 'https://x/'"],
      [[url, '--rate', '0'], "--rate: expected a number greater than 0, got '0'"],
      [
        [url, '--rate', '1', '-d', 'soon'],
        "--duration: expected a duration like '10s', '500ms' or '2m', got 'soon'",
      ],
      [
        [url, '--rate', '1', '--arrival', 'bursty'],
        "--arrival: expected one of constant, poisson, got 'bursty'",
      ],
      [[url, '--rate', '1', '-c', '1.5'], "--connections: expected a positive integer, got '1.5'"],
      [
        [url, '--rate', '1', '--deadline-ms=-1'],
        "--deadline-ms: expected a number of 0 or more, got '-1'",
      ],
      [
        [url, '--rate', '1', '--retry', 'always'],
        "--retry: expected 'none', 'immediate:N' or 'backoff:N[:baseMs]', got 'always'",
      ],
      [[url, '--rate', '1', '-H', 'x'], "--header: expected 'Name: value', got 'x'"],
      [[url, '--rate', '1', '-g', 'a:1'], '--rate and --group cannot be combined'],
      [[url, '-g', 'a'], "--group: expected 'name:rate[:key=value...]', got 'a'"],
      [
        [url, '-g', 'a:fast'],
        "--group 'a:fast': rate: expected a number greater than 0, got 'fast'",
      ],
      [
        [url, '-g', 'a:1:clients=0'],
        "--group 'a:1:clients=0': clients: expected a positive integer, got '0'",
      ],
      [
        [url, '-g', 'a:1:oops'],
        "--group 'a:1:oops': fields: expected key=value pairs after 'name:rate', got 'oops'",
      ],
      [
        [url, '--rate', '1', '--warmup', 'soon'],
        "--warmup: expected a duration like '10s', '500ms' or '2m', got 'soon'",
      ],
      // Node's advice on positionals that start with '-' is left out: it buries the mistake.
      [[url, '--rate', '1', '--frobnicate'], /^unknown option '--frobnicate'$/],
      [[url, '--rate'], /^option '-r, --rate <value>' argument missing$/],
      // Number('') is 0: an empty or padded number is not a number.
      [[url, '--rate', '1', '--seed', ''], "--seed: expected an integer, got ''"],
      [[url, '--rate', '1', '--seed', ' 7'], "--seed: expected an integer, got ' 7'"],
      [[url, '--rate', '1', '--seed', '1e3'], "--seed: expected an integer, got '1e3'"],
      [[url, '--rate', ''], "--rate: expected a number greater than 0, got ''"],
      [[url, '--rate', '1', '-c', ''], "--connections: expected a positive integer, got ''"],
      [[url, '--rate', '1', '--deadline-ms', ''], '--deadline-ms: expected a number of 0 or more'],
    ];
    for (const [argv, message] of cases) {
      expect(() => parseLoadArgs(argv)).toThrow(UsageError);
      expect(() => parseLoadArgs(argv)).toThrow(message);
    }
  });
});

describe('headers from the command line', () => {
  it('are refused before any load when latin1 would turn a character into CR or LF', () => {
    const header = parseLoadArgs([url, '--rate', '1', '-H', 'x-a: a\u010d\u010ax-b: 1']);
    expect(() => resolveOptions(header.options)).toThrow(
      /`headers\.x-a` to be a header value .*U\+010D at index 1/,
    );
    const group = parseLoadArgs([url, '-g', 'g:1:x-a=\u010a']);
    expect(() => resolveOptions(group.options)).toThrow(/`groups\[0\]\.headers\.x-a`/);
  });
});

describe('parseDurationMs', () => {
  it('reads seconds, milliseconds and minutes', () => {
    expect(parseDurationMs('-d', '10')).toBe(10_000);
    expect(parseDurationMs('-d', '2.5s')).toBe(2500);
    expect(parseDurationMs('-d', '500ms')).toBe(500);
    expect(parseDurationMs('-d', '2m')).toBe(120_000);
    expect(() => parseDurationMs('-d', '0s')).toThrow(UsageError);
  });
});

describe('progressLine', () => {
  it('shows elapsed, offered, ok, rejected and timeouts, and the rest only when non-zero', () => {
    const base = {
      elapsedMs: 3000,
      offered: 1500,
      attempts: 1500,
      retries: 0,
      ok: 1200,
      good: 1200,
      rejected: 250,
      error: 0,
      timeout: 50,
      network: 0,
      dropped: 0,
      inFlight: 12,
    };
    expect(progressLine(base)).toBe(
      '  3.0 s  offered 1,500  ok 1,200  rejected 250  timeouts 50  in flight 12',
    );
    // A window closed late and the run's last line stay apart from the second before.
    expect(progressLine({ ...base, elapsedMs: 3_600 })).toMatch(/^ {2}3\.6 s /);
    expect(progressLine({ ...base, elapsedMs: 4_400 })).toMatch(/^ {2}4\.4 s /);
    expect(progressLine({ ...base, dropped: 7 })).toContain('dropped 7');
  });
});
