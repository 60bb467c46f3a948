import { describe, expect, it } from 'vitest';
import { warmupMsOf } from './run-scenario.js';
import { scenarios } from './scenarios.js';

describe('the demo warms each server at the scenario’s own load before measuring it', () => {
  it('2 s for the guards in every default scenario, full or quick; 0.5 s for the naive server', () => {
    for (const quick of [false, true]) {
      for (const s of scenarios({ quick })) {
        expect([s.id, warmupMsOf(s, 'bounded'), warmupMsOf(s, 'bulkhead')]).toEqual([
          s.id,
          2_000,
          2_000,
        ]);
        // What the naive server queues in its warm-up it must work off before it is measured.
        expect(warmupMsOf(s, 'naive')).toBe(500);
      }
    }
  });

  it('a scenario that says otherwise is taken at its word', () => {
    const [first] = scenarios({ quick: false });
    expect(warmupMsOf({ ...first!, warmupMs: 250 }, 'naive')).toBe(250);
    expect(warmupMsOf({ ...first!, warmupMs: 250 }, 'bounded')).toBe(250);
  });
});
