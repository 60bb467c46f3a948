// `spillway demo --scenarios postgres --pg <url>` as a user runs it. Needs PostgreSQL at
// 127.0.0.1:5432, database `test`, trust auth (SPILLWAY_PG_URL to use another; .ci/run
// starts it); the run is skipped with a message outside CI when it is absent. Load: it runs
// with the load files, one at a time.
//
// The reference load against a real database: the accept-everything server's pool line grows
// until its callers give up, while Spillway sheds what the pool cannot take and keeps its
// goodput. Judged by ordering, not by figures a busy machine moves.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { demoJson } from '../helpers/demo.js';
import {
  activeQueries,
  observer,
  pollUntil,
  postgresMissing,
  postgresUrl,
} from '../postgres/helpers.js';

const main = new URL('../../dist/cli/main.js', import.meta.url).pathname;
const missing = await postgresMissing();
if (missing !== undefined) console.warn(`skipping the demo's postgres scenario: ${missing}`);

interface PostgresJson {
  runs: {
    scenario: string;
    server: string;
    goodput: number;
    nextRequest: { ms: number | null; outcome: string } | null;
    groups: {
      sent: number;
      ok: number;
      timeouts: number;
      rejectedByStatus: Record<string, number>;
    }[];
  }[];
  targets: { name: string; pass: boolean; detail: string }[];
}

/** Runs the built CLI; resolves with its exit code and output, whatever the code. */
async function cli(args: readonly string[], file = main) {
  return promisify(execFile)(process.execPath, [file, ...args], { timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

describe('spillway demo --scenarios postgres', () => {
  it('needs --pg, and --pg needs the scenario', async () => {
    const without = await cli(['demo', '--scenarios', 'postgres', '--no-report']);
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('--scenarios postgres runs against a real PostgreSQL');
    expect(without.stderr).toContain('--pg <url>');
    const stray = await cli(['demo', '--pg', postgresUrl, '--no-report']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('add --scenarios postgres');
  });

  it('says to install pg when it is missing', async () => {
    // The built CLI has no dependencies of its own: a copy with no node_modules beside it is
    // an install without pg.
    const dir = mkdtempSync(join(tmpdir(), 'spillway-no-pg-'));
    try {
      cpSync(new URL('../../dist', import.meta.url).pathname, join(dir, 'dist'), {
        recursive: true,
      });
      const run = await cli(
        ['demo', '--scenarios', 'postgres', '--pg', postgresUrl, '--no-report'],
        join(dir, 'dist', 'cli', 'main.js'),
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('npm install pg');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(missing !== undefined)(
    'the naive server collapses on the real database; Spillway keeps its goodput',
    { timeout: 120_000 },
    async () => {
      const out = await demoJson<PostgresJson>(
        [
          '--scenarios',
          'postgres',
          '--pg',
          postgresUrl,
          '--servers',
          'naive,bounded',
          '--json',
          '--no-report',
        ],
        110_000,
      );
      const by = (name: string) => out.runs.find((r) => r.server === name)!;
      const naive = by('naive');
      const bounded = by('bounded');
      console.log(
        `postgres: G naive ${naive.goodput.toFixed(2)}, bounded ${bounded.goodput.toFixed(2)}; ` +
          `next request naive ${JSON.stringify(naive.nextRequest)}, bounded ${JSON.stringify(bounded.nextRequest)}`,
      );
      expect(out.runs.every((r) => r.scenario === 'postgres')).toBe(true);
      expect(bounded.goodput).toBeGreaterThan(naive.goodput);
      // The naive line outgrows its callers' patience; Spillway refuses at the door instead.
      const [n] = naive.groups;
      const [b] = bounded.groups;
      expect(n!.timeouts).toBeGreaterThan(b!.timeouts);
      expect(b!.rejectedByStatus['503'] ?? 0).toBeGreaterThan(0);
      expect(n!.rejectedByStatus['503'] ?? 0).toBe(0);
      // After the rush, Spillway answers the next request; the naive server is still busy.
      expect(bounded.nextRequest?.outcome).toBe('ok');
      expect(bounded.nextRequest!.ms!).toBeLessThan(naive.nextRequest!.ms!);
      expect(out.targets.map((t) => t.name)).toContain(
        'Spillway holds on a real PostgreSQL where accepting everything collapses',
      );
      // Nothing the servers started is left running in the database.
      const watch = await observer();
      try {
        await pollUntil(
          'no query of the demo left running',
          () => activeQueries(watch, 'spillway-serve'),
          (a) => a.length === 0,
        );
      } finally {
        await watch.end();
      }
    },
  );
});
