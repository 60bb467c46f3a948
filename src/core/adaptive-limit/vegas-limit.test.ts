import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { vegasLimit } from './vegas-limit.js';

const perSample = { minWindowMs: 0, maxWindowMs: 0, minWindowSamples: 1 } as const;
const sample = (rttMs: number, inflight: number, dropped = false) => ({
  rttMs,
  inflight,
  dropped,
});

describe('vegasLimit', () => {
  it("starts from Netflix's defaults: 20 within [1, 1000]", () => {
    expect(vegasLimit().current).toBe(20);
  });

  it('learns the no-load RTT first, then steps by the queue estimate L·(1 − noLoad/rtt)', () => {
    const limit = vegasLimit({ ...perSample, clock: createVirtualClock(), random: () => 0.99 });
    limit.onSample(sample(10, 20)); // no-load RTT = 10, no step
    expect(limit.current).toBe(20);
    limit.onSample(sample(10, 20)); // queue 0 ≤ log10: + 6·log10 = +6
    expect(limit.current).toBe(26);
    limit.onSample(sample(10.9, 26)); // queue ⌈26·(1 − 10/10.9)⌉ = 3 > 1, < 3? no: = alpha → hold
    expect(limit.current).toBe(26);
    limit.onSample(sample(10.5, 26)); // queue 2: between threshold and alpha → +1
    expect(limit.current).toBe(27);
    limit.onSample(sample(20, 27)); // queue 14 > beta 6 → −1
    expect(limit.current).toBe(26);
    limit.onSample(sample(10, 26, true)); // a drop → −log10
    expect(limit.current).toBe(25);
    limit.onSample(sample(20, 12)); // app-limited (12 × 2 < 25): the RTT says nothing
    expect(limit.current).toBe(25);
  });

  it('scales its steps with log10 of the limit (2 from 100)', () => {
    const limit = vegasLimit({ ...perSample, clock: createVirtualClock(), initialLimit: 150 });
    limit.onSample(sample(10, 150));
    limit.onSample(sample(10, 150));
    expect(limit.current).toBe(162);
    limit.onSample(sample(30, 162));
    expect(limit.current).toBe(160);
  });

  it('forgets the no-load RTT every probeMultiplier × U[0.5, 1) × L windows', () => {
    const limit = vegasLimit({
      ...perSample,
      clock: createVirtualClock(),
      initialLimit: 10,
      probeMultiplier: 1,
      random: () => 0, // jitter 0.5: a probe once the window count reaches 0.5 × 1 × L
    });
    limit.onSample(sample(10, 10)); // window 1: the no-load RTT is 10
    limit.onSample(sample(40, 10)); // 2: queue ⌈10·0.75⌉ = 8 > 6 → 9
    limit.onSample(sample(40, 10)); // 3: queue 7 > 6 → 8
    expect(limit.current).toBe(8);
    limit.onSample(sample(40, 10)); // 4 ≥ 0.5 × 8: the probe; the no-load RTT becomes 40
    expect(limit.current).toBe(8);
    limit.onSample(sample(40, 10)); // 40 no longer looks like queueing: + 6
    expect(limit.current).toBe(14);
  });

  it('validates every option, naming it', () => {
    expect(() => vegasLimit({ smoothing: 0 })).toThrow(/`smoothing`/);
    expect(() => vegasLimit({ smoothing: 1.5 })).toThrow(/`smoothing`/);
    expect(() => vegasLimit({ probeMultiplier: 0 })).toThrow(/`probeMultiplier`/);
    expect(() => vegasLimit({ percentile: 0 })).toThrow(/`percentile`/);
    expect(() => vegasLimit({ percentile: 2 })).toThrow(/`percentile`/);
    expect(() => vegasLimit({ random: 3 as never })).toThrow(/`random`/);
    expect(() => vegasLimit({ maxLimit: 0 })).toThrow(/`maxLimit`/);
  });
});
