import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { aimdLimit } from './aimd-limit.js';

// One sample = one window, so each call below is one step of the algorithm.
const perSample = { minWindowMs: 0, maxWindowMs: 0, minWindowSamples: 1 } as const;

describe('aimdLimit', () => {
  it("starts from Netflix's defaults: 20 within [20, 200]", () => {
    expect(aimdLimit().current).toBe(20);
    expect(aimdLimit({ minLimit: 5, maxLimit: 10 }).current).toBe(10); // default follows bounds
  });

  it('adds one per clean window only while the work uses at least half the limit', () => {
    const limit = aimdLimit({ ...perSample, clock: createVirtualClock() });
    limit.onSample({ rttMs: 5, inflight: 9, dropped: false }); // 9 × 2 < 20: app-limited
    expect(limit.current).toBe(20);
    limit.onSample({ rttMs: 5, inflight: 10, dropped: false });
    expect(limit.current).toBe(21);
  });

  it('multiplies by backoffRatio on a drop or a timeout, never below minLimit', () => {
    const clock = createVirtualClock();
    const limit = aimdLimit({ ...perSample, clock, initialLimit: 100, minLimit: 10 });
    const changes: string[] = [];
    limit.onChange((e) => changes.push(`${e.previous}→${e.limit}${e.dropped ? ' drop' : ''}`));
    limit.onSample({ rttMs: 5, inflight: 100, dropped: true });
    expect(limit.current).toBe(90);
    limit.onSample({ rttMs: 5_001, inflight: 1, dropped: false }); // slower than timeoutMs
    expect(limit.current).toBe(81);
    for (let i = 0; i < 50; i++) limit.onSample({ rttMs: 5, inflight: 1, dropped: true });
    expect(limit.current).toBe(10);
    expect(changes.slice(0, 2)).toEqual(['100→90 drop', '90→81 drop']);
  });

  it('one drop per window costs one backoff, however many requests dropped in it', () => {
    const clock = createVirtualClock();
    const limit = aimdLimit({ clock, initialLimit: 100 });
    for (let i = 0; i < 500; i++) limit.onSample({ rttMs: 5, inflight: 100, dropped: true });
    clock.advanceSync(1_000);
    limit.onSample({ rttMs: 5, inflight: 100, dropped: false });
    expect(limit.current).toBe(90);
  });

  it('validates every option, naming it', () => {
    expect(() => aimdLimit({ backoffRatio: 1 })).toThrow(/`backoffRatio`/);
    expect(() => aimdLimit({ backoffRatio: 0.4 })).toThrow(/`backoffRatio`/);
    expect(() => aimdLimit({ timeoutMs: 0 })).toThrow(/`timeoutMs`/);
    expect(() => aimdLimit({ minLimit: 0 })).toThrow(/`minLimit`/);
    expect(() => aimdLimit({ minLimit: 30, maxLimit: 10 })).toThrow(/`maxLimit`/);
    expect(() => aimdLimit({ initialLimit: 500 })).toThrow(
      /`initialLimit` to be an integer from minLimit \(20\) to maxLimit \(200\), got 500/,
    );
    expect(() => aimdLimit({ initialLimit: 20.5 })).toThrow(/`initialLimit`/);
    expect(() => aimdLimit({ minWindowSamples: 0 })).toThrow(/`minWindowSamples`/);
    expect(() => aimdLimit([] as never)).toThrow(/aimdLimit options/);
    expect(aimdLimit({ timeoutMs: Infinity }).current).toBe(20);
  });
});
