// The README's load-testing commands (`<!-- example-sh: load -->`) show what they say: against
// the `bounded` server, one client without an `x-client-id` meets its quota (429s), and the
// same rate from 100 clients within their quotas meets the server's capacity (503s). Run as
// written, but for what a test must change: the built CLI for `npx spillway`, a free port for
// 3000, 2 s runs for 5 s ones, `--json` to read the result, and no report file.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { LoadResult } from '../src/load/index.js';
import { codeBlocks, root } from './helpers/markdown-blocks.js';

const cli = join(root, 'dist', 'cli', 'main.js');
const block = codeBlocks('README.md').find((b) => b.note === 'example-sh: load');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGTERM');
});

/** The block's commands as argument lists: continuations joined, single quotes honoured. */
function commands(code: string): string[][] {
  return code
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!));
}

/** `npx spillway …` as the built CLI, with the test's substitutions; `port` 0 for the server. */
function asTest(words: readonly string[], port: number): string[] {
  expect(words.slice(0, 2)).toEqual(['npx', 'spillway']);
  const replaced: Record<string, string | undefined> = {
    '--port': String(port),
    '--duration': '2s',
    '--report': undefined,
  };
  const args: string[] = [];
  for (let i = 2; i < words.length; i++) {
    const w = words[i]!;
    if (w in replaced) {
      const value = replaced[w];
      if (value !== undefined) args.push(w, value);
      i++; // the option's own value
    } else if (w !== '&') {
      args.push(w.replace('127.0.0.1:3000', `127.0.0.1:${port}`));
    }
  }
  return args;
}

async function serve(args: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  for await (const line of createInterface({ input: child.stdout })) {
    const m = /^listening on (\d+)$/.exec(line);
    if (m) return Number(m[1]);
  }
  throw new Error('serve exited before listening');
}

async function load(args: readonly string[]): Promise<Readonly<Record<string, number>>> {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args, '--json'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const result = JSON.parse(stdout) as LoadResult;
  return result.totals.rejectedByStatus;
}

describe('README: load testing the bounded server', () => {
  it('one client meets its quota (429); a hundred within theirs meet capacity (503)', async () => {
    expect(block, 'README.md has a block marked <!-- example-sh: load -->').toBeDefined();
    const [server, oneClient, manyClients, ...rest] = commands(block!.code);
    expect(rest).toEqual([]);
    const port = await serve(asTest(server!, 0));

    const one = await load(asTest(oneClient!, port));
    expect(one['429'] ?? 0).toBeGreaterThan(0);
    // A busy machine may stall the server into a few 503s; the quota still refuses most.
    expect(one['429'] ?? 0).toBeGreaterThan(one['503'] ?? 0);

    const many = await load(asTest(manyClients!, port));
    expect(many['503'] ?? 0).toBeGreaterThan(0);
    expect(many['503'] ?? 0).toBeGreaterThan(many['429'] ?? 0);
  }, 60_000);
});
