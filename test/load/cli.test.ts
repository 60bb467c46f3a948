// `spillway load` as users run it: the built CLI in a child process against a local server.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadResult } from '../../src/load/index.js';
import { startServer, type TestServer } from './servers.js';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const cli = join(root, 'dist', 'cli', 'main.js');
let server: TestServer;

beforeAll(async () => {
  server = await startServer((req, res) => {
    if (req.headers['x-tenant'] === 'greedy') {
      res.writeHead(429, { 'retry-after': '1' });
      res.end();
      return;
    }
    res.end('ok');
  });
});
afterAll(() => server.close());

describe.skipIf(!existsSync(cli))('spillway load (built CLI)', () => {
  it('prints a table with every group and the validity verdict', async () => {
    const { stdout, stderr } = await run(process.execPath, [
      cli,
      'load',
      `${server.url}/`,
      '-d',
      '1s',
      '-g',
      'greedy:40:x-tenant=greedy',
      '-g',
      'polite:20:clients=4:x-tenant=polite',
    ]);
    expect(stdout).toMatch(/^group\s+offered\/s\s+sent\s+ok/m);
    expect(stdout).toMatch(/^greedy\s+40\s+40\s+0\s+0\s+–\s+–\s+40 \(429: 40\)/m);
    expect(stdout).toMatch(/^polite\s+20\s+20\s+20\s+20/m);
    expect(stdout).toMatch(/^total\s+60\s+60\s+20/m);
    expect(stdout).toMatch(/generator kept its schedule|NOT VALID/);
    expect(stderr).toBe(''); // no progress lines for a 1 s run when stderr is not a terminal
  });

  it('--json prints the whole result; --report writes a self-contained page', async () => {
    const dir = join(root, 'test-artifacts');
    mkdirSync(dir, { recursive: true });
    const report = join(dir, 'cli-report.html');
    const { stdout, stderr } = await run(process.execPath, [
      cli,
      'load',
      `${server.url}/`,
      '--rate',
      '50',
      '-d',
      '1s',
      '--json',
      '--report',
      report,
      '--label',
      'cli test',
    ]);
    const result = JSON.parse(stdout) as LoadResult;
    expect(result.label).toBe('cli test');
    expect(result.totals).toMatchObject({ offered: 50, ok: 50 });
    expect(result.windows.length).toBeGreaterThanOrEqual(1);
    expect(stderr).toContain(`report written to ${report}`);
    expect(readFileSync(report, 'utf8')).toContain('"label":"cli test"');
  });

  it('--help explains the options with examples; bad input exits 2 naming the flag', async () => {
    const { stdout } = await run(process.execPath, [cli, 'load', '--help']);
    for (const flag of [
      '--rate',
      '--duration',
      '--arrival',
      '--group',
      '--deadline-ms',
      '--retry',
      '--new-connection',
      '--json',
      '--report',
      'Examples:',
    ]) {
      expect(stdout).toContain(flag);
    }
    const bad = await run(process.execPath, [
      cli,
      'load',
      `${server.url}/`,
      '--rate',
      'lots',
    ]).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2 });
    expect((bad as { stderr: string }).stderr).toContain(
      "--rate: expected a number greater than 0, got 'lots'",
    );
  });

  it('refuses a header value that latin1 would turn into CR/LF: exit 2, nothing sent', async () => {
    const before = server.arrivals.length;
    const bad = await run(process.execPath, [
      cli,
      'load',
      `${server.url}/`,
      '--rate',
      '10',
      '-d',
      '1s',
      '-H',
      'x-tenant: polite\u010d\u010ax-tenant: greedy',
    ]).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2 });
    const stderr = (bad as { stderr: string }).stderr;
    expect(stderr).toContain('Expected `headers.x-tenant` to be a header value');
    expect(stderr).toContain('U+010D at index 6 is not allowed');
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(server.arrivals.length).toBe(before);
  });
});
