import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { gradientLimit } from './gradient-limit.js';

const perSample = { minWindowMs: 0, maxWindowMs: 0, minWindowSamples: 1 } as const;
const sample = (rttMs: number, inflight: number, dropped = false) => ({
  rttMs,
  inflight,
  dropped,
});

describe('gradientLimit', () => {
  it("starts from Gradient2's defaults: 20 within [20, 200]", () => {
    expect(gradientLimit().current).toBe(20);
  });

  it('grows by smoothing × queueSize per window while the RTT stays within tolerance', () => {
    const limit = gradientLimit({ ...perSample, clock: createVirtualClock(), initialLimit: 50 });
    for (let i = 0; i < 10; i++) limit.onSample(sample(10, 50));
    // 0.8·L + 0.2·(L + 4) = L + 0.8 per window: 10 windows → 58.
    expect(limit.current).toBe(58);
  });

  it('shrinks in proportion once the short RTT exceeds tolerance × the long one (gradient ≥ 0.5)', () => {
    const limit = gradientLimit({ ...perSample, clock: createVirtualClock(), initialLimit: 100 });
    for (let i = 0; i < 10; i++) limit.onSample(sample(10, 100)); // baseline 10 ms
    expect(limit.current).toBe(108); // + 0.8 per window
    limit.onSample(sample(100, 200)); // gradient 1.5·10/100 → clamped 0.5
    // 0.8·L + 0.2·(0.5·L + 4) = 0.9·108 + 0.8 = 98
    expect(limit.current).toBe(98);
  });

  it('cuts by backoffRatio on a drop (Gradient2 ignores drops)', () => {
    const limit = gradientLimit({ ...perSample, clock: createVirtualClock(), initialLimit: 100 });
    limit.onSample(sample(10, 100, true));
    expect(limit.current).toBe(90);
    limit.onSample(sample(0.01, 100, true)); // a drop that measured nothing still counts
    expect(limit.current).toBe(81);
    limit.onSample(sample(6_000, 100)); // slower than timeoutMs (5 s): a timeout is a drop
    expect(limit.current).toBe(72);
  });

  it('reads a window by its 90th percentile, so a slow tail shrinks it where a mean might not', () => {
    const clock = createVirtualClock();
    const limit = gradientLimit({ clock, initialLimit: 100, minWindowSamples: 10 });
    const window = (rtts: number[]): void => {
      for (const rtt of rtts) limit.onSample(sample(rtt, 100));
      clock.advanceSync(1_000);
    };
    for (let i = 0; i < 10; i++) window(Array.from({ length: 10 }, () => 10));
    const before = limit.current;
    // Mean 14.5 (within 1.5 × 10), but the slowest 20 % take 30 ms: p90 = 30 → shrink.
    window([...Array.from({ length: 8 }, () => 10.6), 30, 30]);
    limit.onSample(sample(10, 100));
    expect(limit.current).toBeLessThan(before);
  });

  it('stays put while app-limited (in flight below half the limit)', () => {
    const limit = gradientLimit({ ...perSample, clock: createVirtualClock(), initialLimit: 100 });
    for (let i = 0; i < 20; i++) limit.onSample(sample(10, 49));
    expect(limit.current).toBe(100);
  });

  it('validates every option, naming it', () => {
    expect(() => gradientLimit({ rttTolerance: 0.9 })).toThrow(/`rttTolerance`/);
    expect(() => gradientLimit({ rttTolerance: Infinity })).toThrow(/`rttTolerance`/);
    expect(() => gradientLimit({ smoothing: 0 })).toThrow(/`smoothing`/);
    expect(() => gradientLimit({ queueSize: -1 })).toThrow(/`queueSize`/);
    expect(() => gradientLimit({ longWindow: 0 })).toThrow(/`longWindow`/);
    expect(() => gradientLimit({ backoffRatio: 0.2 })).toThrow(/`backoffRatio`/);
    expect(() => gradientLimit({ percentile: -0.1 })).toThrow(/`percentile`/);
    expect(() => gradientLimit({ timeoutMs: -5 })).toThrow(/`timeoutMs`/);
    expect(() => gradientLimit({ maxWindowMs: 10 })).toThrow(/`maxWindowMs`/);
  });
});
