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

  it('refuses bad input with a clear message and exit code 2', async () => {
    const child = spawn(process.execPath, [main, 'serve', 'fast'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(2);
    expect(stderr).toContain("serve needs a mode: 'naive' or 'bounded', got 'fast'");
  });
});
