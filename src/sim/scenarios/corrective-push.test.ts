import { describe, expect, it } from 'vitest';
import { correctivePushScenario, pushTimes } from './corrective-push.js';

describe('the corrective-push scenario', () => {
  // Seeds 1-3 gave restart 10 s, shed 33-38 s, budget 66-75 s. A budget only stops new
  // amplification: the line of abandoned work (1,000) drains at (1 − 0.7) × 50 a second, 67 s.
  it('naive retries stay down without a push; each push brings goodput back in its time', async () => {
    const r = await correctivePushScenario({ seed: 1 });
    const by = Object.fromEntries(r.timelines.map((t) => [t.policy, t]));
    console.log(JSON.stringify(r.timelines.map((t) => [t.policy, t.recoverySeconds])));
    const after = (policy: string): number[] =>
      by[policy]!.goodput.slice(pushTimes.pushAtMs / 1_000);
    // Without a push: never back, and goodput stays below half the load after the trigger.
    expect(by['none']!.recoverySeconds).toBeNull();
    expect(Math.max(...after('none'))).toBeLessThan(0.5 * pushTimes.load);
    for (const [p, withinSeconds] of [
      ['restart', 15],
      ['shed', 45],
      ['budget', 85],
    ] as const) {
      expect(by[p]!.recoverySeconds).not.toBeNull();
      expect(by[p]!.recoverySeconds!).toBeLessThanOrEqual(withinSeconds);
    }
  }, 60_000);

  it('gives the same JSON for the same seed', async () => {
    const a = JSON.stringify(await correctivePushScenario({ seed: 5, policies: ['restart'] }));
    expect(JSON.stringify(await correctivePushScenario({ seed: 5, policies: ['restart'] }))).toBe(
      a,
    );
  }, 60_000);

  it('refuses an unknown push by name', async () => {
    await expect(correctivePushScenario({ policies: ['pray'] })).rejects.toThrow(
      /`policies`.*pray/,
    );
  });
});
