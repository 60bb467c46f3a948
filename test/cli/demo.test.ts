// `spillway demo --quick --json`, as CI runs it: the ordering the demo exists to show must hold
// on any machine — Spillway's goodput far above the naive server's, and the request sent after
// the rush answered far sooner. (The absolute targets are checked by the demo itself and
// recorded in BENCHMARKS.md from a quiet machine.)
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const main = new URL('../../dist/cli/main.js', import.meta.url).pathname;

interface DemoJson {
  runs: {
    scenario: string;
    server: string;
    goodput: number;
    nextRequest: { ms: number | null; outcome: string } | null;
    groups: { name: string; sent: number; ok: number; rejectedByStatus: Record<string, number> }[];
  }[];
  targets: { name: string; pass: boolean; detail: string }[];
}

describe('spillway demo --quick --json', () => {
  it(
    'bounded beats naive by a wide margin, and recovers at once after the rush',
    { timeout: 180_000 },
    async () => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          main,
          'demo',
          '--quick',
          '--json',
          '--no-report',
          '--servers',
          'naive,bounded',
          '--scenarios',
          'reference,greedy',
        ],
        { maxBuffer: 16 * 1024 * 1024, timeout: 170_000 },
      );
      const demo = JSON.parse(stdout) as DemoJson;
      const run = (scenario: string, server: string) =>
        demo.runs.find((r) => r.scenario === scenario && r.server === server)!;
      const naive = run('reference', 'naive');
      const bounded = run('reference', 'bounded');
      console.log(
        `demo --quick: reference G naive ${naive.goodput.toFixed(2)} vs bounded ${bounded.goodput.toFixed(2)}; ` +
          `next request naive ${naive.nextRequest?.ms?.toFixed(0)} ms (${naive.nextRequest?.outcome}) vs bounded ${bounded.nextRequest?.ms?.toFixed(0)} ms`,
      );
      expect(bounded.goodput).toBeGreaterThan(naive.goodput + 0.25);
      expect(bounded.goodput).toBeGreaterThan(0.8);
      expect(bounded.nextRequest?.outcome).toBe('ok');
      expect(bounded.nextRequest!.ms!).toBeLessThan(naive.nextRequest!.ms! / 3);
      // The greedy client is held to its quota by 429s; the polite clients are not refused.
      const greedy = run('greedy', 'bounded');
      const hog = greedy.groups.find((g) => g.name === 'greedy')!;
      const polite = greedy.groups.find((g) => g.name === 'polite')!;
      expect(hog.rejectedByStatus['429']).toBeGreaterThan(hog.sent / 3);
      expect(polite.ok / polite.sent).toBeGreaterThan(0.95);
      expect(demo.targets.length).toBeGreaterThan(0);
    },
  );
});
