// `spillway serve` as a user runs it: a child process per framework and mode, ready when it
// prints "listening on <port>", answering the reference routes.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';

const main = new URL('../../dist/cli/main.js', import.meta.url).pathname;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGTERM');
});

async function serve(...args: string[]): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [main, 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const m = /^listening on (\d+)$/.exec(line);
    if (m) return { port: Number(m[1]), child };
  }
  throw new Error('serve exited before listening');
}

/** The child's exit code and signal, or 'timeout' (then it is killed) after `ms`. */
async function exitWithin(
  child: ChildProcess,
  ms: number,
): Promise<[number | null, string | null] | 'timeout'> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return [child.exitCode, child.signalCode];
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  const outcome = await Promise.race([
    once(child, 'exit') as Promise<[number | null, string | null]>,
    timeout,
  ]);
  clearTimeout(timer);
  if (outcome === 'timeout') child.kill('SIGKILL');
  return outcome;
}

describe('spillway serve', () => {
  for (const framework of ['node', 'express', 'fastify']) {
    it(`${framework}: naive accepts everything, bounded is the reference guard`, async () => {
      const naive = await serve('naive', '--framework', framework);
      const bounded = await serve(
        'bounded',
        '--framework',
        framework,
        '--client-rate',
        '1',
        '--client-burst',
        '5',
      );
      for (const { port } of [naive, bounded]) {
        expect((await send(port, { path: '/orders' })).body).toBe('{"ok":true}');
        expect((await send(port, { path: '/healthz' })).body).toBe('ok');
        const stats = (await send(port, { path: '/stats' })).json<{ maxRssBytes: number }>();
        expect(stats.maxRssBytes).toBeGreaterThan(1_000_000);
      }
      const spent = { 'spillway-deadline': '0' };
      expect((await send(naive.port, { headers: spent })).status).toBe(200);
      expect((await send(bounded.port, { headers: spent })).status).toBe(503);
      // Buckets (here 1/s, burst 5) keyed on x-client-id: forty at once from one client meet 429s;
      // forty at once from forty clients do not.
      const flood = (id: (i: number) => string) =>
        Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            send(bounded.port, { headers: { 'x-client-id': id(i) } }),
          ),
        );
      const one = await flood(() => `one-${framework}`);
      const many = await flood((i) => `many-${framework}-${i}`);
      expect(one.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(20);
      expect(many.filter((a) => a.status === 429).length).toBe(0);
      expect(one.every((a) => [200, 429, 503].includes(a.status))).toBe(true);
      for (const { child } of [naive, bounded]) {
        child.kill('SIGTERM');
        const [code] = (await once(child, 'exit')) as [number | null];
        expect(code).toBe(0);
      }
    });
  }

  it('refuses bad input with a clear message and exit code 2, never a stack trace', async () => {
    const cases: [string[], string][] = [
      [['fast'], "the mode must be naive, bounded or bulkhead, got 'fast'"],
      // Number('') is 0: an empty port must not quietly mean "any free port".
      [['bounded', '--port', ''], "--port must be a whole number from 0 to 65535, got ''"],
      [['naive', '--port', '70000'], "--port must be a whole number from 0 to 65535, got '70000'"],
      [['bounded', '--connections', ''], '--connections must be a whole number from 1'],
      // /admin/service-ms has no authentication: not on the network unless asked for.
      [
        ['bounded', '--host', '0.0.0.0'],
        "--host '0.0.0.0' is not a loopback address, and /admin/service-ms has no authentication",
      ],
    ];
    for (const [args, message] of cases) {
      const child = spawn(process.execPath, [main, 'serve', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      expect(await exitWithin(child, 8000), args.join(' ')).toEqual([2, null]);
      expect(stderr).toContain(message);
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(stdout).not.toContain('listening on');
    }
  });

  it('SIGHUP (a closed terminal) stops it as SIGINT and SIGTERM do: closed, exit code 0', async () => {
    const { child } = await serve('naive');
    child.kill('SIGHUP');
    expect(await exitWithin(child, 8000)).toEqual([0, null]);
  });

  it('one SIGTERM stops bounded --redis <unreachable> promptly; Redis trouble is one clear line', async () => {
    // A port nobody listens on. Not one freed by a probe: the server under test, or a test
    // beside it, can be handed that port again (once, the Redis client reached an HTTP
    // listener there). Port 1 is outside the ephemeral range every listen(0) draws from.
    const closedPort = 1;

    const child = spawn(
      process.execPath,
      [main, 'serve', 'bounded', '--redis', `redis://127.0.0.1:${closedPort}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    let port = 0;
    for await (const line of createInterface({ input: child.stdout })) {
      const m = /^listening on (\d+)$/.exec(line);
      if (m) {
        port = Number(m[1]);
        break;
      }
    }
    expect(port).toBeGreaterThan(0);
    // Without Redis, the quota falls back to this server's own share: requests are served.
    expect((await send(port, { headers: { 'x-client-id': 'a' } })).status).toBe(200);
    // Let the client fail to reconnect a dozen times or so (ioredis backs off 50, 100, … ms).
    await new Promise((resolve) => setTimeout(resolve, 2500));

    const signalledAt = performance.now();
    child.kill('SIGTERM');
    const outcome = await exitWithin(child, 8000);
    const stopMs = performance.now() - signalledAt;
    expect(outcome, 'exit code and signal after one SIGTERM').toEqual([0, null]);
    // Normally well under a second; the bound allows for a loaded machine.
    expect(stopMs).toBeLessThan(5000);
    expect(stderr).not.toContain('[ioredis]');
    expect(stderr).not.toContain('still running');
    const lines = stderr.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(lines[0]).toBe(
      `spillway serve: Redis at redis://127.0.0.1:${closedPort} is unreachable (connect ECONNREFUSED 127.0.0.1:${closedPort}); ` +
        "this server enforces each per-client quota in memory on its own (policy 'local') until it answers. Reconnecting in the background.",
    );
  }, 30_000);
});
