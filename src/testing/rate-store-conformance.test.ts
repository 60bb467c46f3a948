// The conformance suite against core's memory store (on a virtual clock), and the runner's
// own behaviour on a store that breaks the contract.
import { describe, expect, it } from 'vitest';
import { memoryRateStore, type RateDecision, type RateStore } from '../index.js';
import { rateStoreConformance, runConformance } from './rate-store-conformance.js';
import { createVirtualClock } from './virtual-clock.js';

const clock = createVirtualClock();
const store = memoryRateStore({ clock });
const cases = rateStoreConformance({
  createStore: () => store,
  advance: (ms) => clock.advance(ms),
});

describe('memoryRateStore conforms', () => {
  for (const c of cases) it(c.name, c.run);
});

describe('runConformance', () => {
  it('reports every case of a store that admits everything as failed where it must', async () => {
    const lax: RateStore = {
      take: (_key, _n, policy): RateDecision => ({
        ok: true,
        remaining: policy.burst,
        limit: policy.burst,
        resetMs: 0,
      }),
    };
    const seen: string[] = [];
    const report = await runConformance(
      rateStoreConformance({ createStore: () => lax, advance: () => Promise.resolve() }),
      { onResult: (name) => seen.push(name) },
    );
    expect(report.failed.length).toBeGreaterThan(4);
    expect(seen.length).toBe(report.passed.length + report.failed.length);
  });

  it('passes the memory store in full without a test runner', async () => {
    const report = await runConformance(cases);
    expect(report.failed).toEqual([]);
  });
});
