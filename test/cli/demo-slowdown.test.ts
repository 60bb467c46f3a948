// `spillway demo --scenarios slowdown`: the database slows from 30 to 300 ms for a third of
// the run. The adaptive limit must shrink while it is slow and grow back after, and serve
// about as well as the right fixed cap (the pool size) — far better than a cap sized too big.
import { describe, expect, it } from 'vitest';
import { demoJson } from '../helpers/demo.js';

interface SlowdownJson {
  runs: { server: string; limitTrace?: number[]; okPerSecWhileSlow?: number }[];
  targets: { name: string; pass: boolean; detail: string }[];
}

describe('spillway demo --scenarios slowdown', () => {
  it(
    'the adaptive limit shrinks and recovers, and beats an oversized fixed cap',
    { timeout: 180_000 },
    async () => {
      const out = await demoJson<SlowdownJson>(
        ['--quick', '--json', '--no-report', '--scenarios', 'slowdown'],
        170_000,
      );
      const by = (name: string) => out.runs.find((r) => r.server === name)!;
      const adaptive = by('adaptive');
      const oversized = by('fixed-50');
      const pool = by('fixed-10');
      const trace = adaptive.limitTrace!;
      console.log(
        `slowdown: ok/s while slow — fixed 10: ${pool.okPerSecWhileSlow?.toFixed(0)}, fixed 50: ${oversized.okPerSecWhileSlow?.toFixed(0)}, adaptive: ${adaptive.okPerSecWhileSlow?.toFixed(0)}; adaptive limit ${trace.join(' ')}`,
      );
      const third = Math.floor(trace.length / 3);
      const before = Math.max(...trace.slice(0, third));
      const duringMin = Math.min(...trace.slice(third, 2 * third + 1));
      expect(duringMin).toBeLessThan(before);
      expect(trace.at(-1)!).toBeGreaterThan(duringMin);
      expect(adaptive.okPerSecWhileSlow!).toBeGreaterThan(oversized.okPerSecWhileSlow! * 1.2);
      expect(adaptive.okPerSecWhileSlow!).toBeGreaterThan(pool.okPerSecWhileSlow! * 0.8);
    },
  );
});
