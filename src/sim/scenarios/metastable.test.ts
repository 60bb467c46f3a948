import { describe, expect, it } from 'vitest';
import { metastableScenario } from './metastable.js';

describe('the metastable scenario', () => {
  it('naive retries show a metastable region; Spillway defaults recover everywhere below capacity', async () => {
    const r = await metastableScenario({
      seed: 1,
      policies: ['naive', 'defaults'],
      loads: [0.5, 0.9],
      triggerSeconds: [1, 20],
    });
    const [naive, defaults] = r.panels;
    // A short dip is survived by everyone; a long one leaves naive retries stuck.
    expect(naive!.cells.filter((c) => !c.recovered).length).toBeGreaterThan(0);
    expect(naive!.cells.find((c) => c.load === 0.5 && c.triggerSeconds === 1)!.recovered).toBe(
      true,
    );
    expect(defaults!.cells.every((c) => c.load >= 1 || c.recovered)).toBe(true);
  }, 60_000);
});
