// Every mistake a user can make on the command line, as they meet it: one message saying what
// went wrong and what to do, exit code 2 for bad usage and 1 for a target that is not there,
// and never a stack trace.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const main = new URL('../../dist/cli/main.js', import.meta.url).pathname;

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `spillway <args…>` to its end (killed after 30 s: none of these should take 3). */
async function spillway(...args: string[]): Promise<Outcome> {
  const child = spawn(process.execPath, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** What a usage error prints: the command, what is wrong, and where the options are. */
const usage = (command: string, message: string): string =>
  `spillway ${command}: ${message}\nRun 'spillway ${command} --help' for its options.\n`;

/** A port that something listens on (for EADDRINUSE), and one that nothing does. */
let taken: Server;
let takenPort = 0;
// A port nobody listens on: not one freed by a probe, which a server started beside this test
// can be handed again; port 1 is outside the ephemeral range every listen(0) draws from.
const closedPort = 1;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as AddressInfo).port;
});
afterAll(() => taken.close());

describe('spillway, used wrongly', () => {
  const usageCases: [string[], string, string][] = [
    [['demo', '--bogus'], 'demo', "unknown option '--bogus'"],
    [['demo', '--report'], 'demo', "option '--report <value>' argument missing"],
    [
      ['demo', '--replicas', 'x'],
      'demo',
      '--replicas needs --redis <url>: replicas share their quotas through Redis (the demo at scale)',
    ],
    [
      ['demo', '--servers', 'fast'],
      'demo',
      "--servers: 'fast' is not one of naive, bulkhead, bounded",
    ],
    [['serve', 'bounded', '--bogus'], 'serve', "unknown option '--bogus'"],
    [
      ['serve', '--port', '99999'],
      'serve',
      "missing the mode: naive, bounded or bulkhead, as in 'spillway serve bounded'",
    ],
    [['serve', 'fast'], 'serve', "the mode must be naive, bounded or bulkhead, got 'fast'"],
    [
      ['serve', 'naive', '--port', '99999'],
      'serve',
      "--port must be a whole number from 0 to 65535, got '99999'",
    ],
    [['load'], 'load', 'missing the target URL: spillway load http://127.0.0.1:3000/ --rate 500'],
    [['load', 'http://127.0.0.1:3000/', '--bogus'], 'load', "unknown option '--bogus'"],
  ];
  for (const [args, command, message] of usageCases) {
    it(`${args.join(' ')}: usage error, exit code 2`, async () => {
      const { code, stdout, stderr } = await spillway(...args);
      expect(stderr).toBe(usage(command, message));
      expect(code).toBe(2);
      expect(stdout).toBe('');
    });
  }

  it('an unknown command: the list is one --help away, exit code 2', async () => {
    const { code, stderr } = await spillway('serv');
    expect(stderr).toBe("spillway: unknown command 'serv'. Run 'spillway --help' for the list.\n");
    expect(code).toBe(2);
  });

  it('serve on a port in use: what to do instead, exit code 2', async () => {
    const { code, stderr } = await spillway('serve', 'naive', '--port', String(takenPort));
    expect(stderr).toBe(
      usage(
        'serve',
        `cannot listen on 127.0.0.1 port ${takenPort} (EADDRINUSE): something else listens there; ` +
          'choose another --port, or 0 for a free one',
      ),
    );
    expect(code).toBe(2);
  });

  it('load of a host that does not resolve: one line, exit code 1', async () => {
    const { code, stdout, stderr } = await spillway(
      'load',
      'http://no-such-host.invalid/',
      '--rate',
      '10',
      '--duration',
      '1s',
    );
    // ENOTFOUND where a resolver answers; EAI_AGAIN where none can be reached.
    expect(stderr).toMatch(
      /^spillway load: cannot resolve the host 'no-such-host\.invalid' \((ENOTFOUND|EAI_AGAIN|EAI_FAIL)\): check the URL, or use an IP address\n$/,
    );
    expect(code).toBe(1);
    expect(stdout).toBe('');
  });

  it('load of a port nothing listens on: what it measured, then why it is no result, exit code 1', async () => {
    const { code, stdout, stderr } = await spillway(
      'load',
      `http://127.0.0.1:${closedPort}/`,
      '--rate',
      '20',
      '--duration',
      '500ms',
    );
    expect(stdout).toContain('network');
    expect(stderr.trimEnd().split('\n').at(-1)).toMatch(
      new RegExp(
        `^spillway load: connection refused at 127\\.0\\.0\\.1:${closedPort} \\(ECONNREFUSED\\) ` +
          'for all \\d+ requests: is the server running, and on that port\\?$',
      ),
    );
    expect(code).toBe(1);
    expect(stderr).not.toMatch(/^\s+at /m);
  });
});
