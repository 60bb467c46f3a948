import { describe, expect, it } from 'vitest';
import { spikeScenario } from './spike.js';

describe('the spike scenario', () => {
  it('agrees with the real demo: bounded G near 1 at 1.5× and 10×, naive well below at 1.5×', async () => {
    // The real `spillway demo` (BENCHMARKS.md, "The demo"): bounded G 0.988–0.997 at 1.5× and
    // 0.979–1.000 at 10×; naive 0.57 at 1.5×.
    const r = await spikeScenario({ seed: 1 });
    const g = (server: string, shape: number): number =>
      r.rows.find((x) => x.server === server && x.shape === shape)!.g;
    console.log(JSON.stringify(r.rows.map((x) => [x.server, x.shape, x.g])));
    expect(Math.abs(g('bounded', 1.5) - 1)).toBeLessThanOrEqual(0.03);
    expect(Math.abs(g('bounded', 10) - 1)).toBeLessThanOrEqual(0.03);
    expect(g('naive', 1.5)).toBeLessThan(0.7);
  }, 60_000);

  it('gives the same JSON for the same seed', async () => {
    const a = JSON.stringify(await spikeScenario({ seed: 3 }));
    expect(JSON.stringify(await spikeScenario({ seed: 3 }))).toBe(a);
  }, 60_000);

  it('refuses an unknown server by name', async () => {
    await expect(spikeScenario({ servers: ['fast'] })).rejects.toThrow(/`servers`.*fast/);
  });
});
