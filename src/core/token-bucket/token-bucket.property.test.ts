import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { tokenBucket } from './token-bucket.js';

/** An arrival: wait `gapMs`, then try to take `n`. */
const arrivals = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 400 }), n: fc.integer({ min: 1, max: 4 }) }),
  { minLength: 1, maxLength: 300 },
);
const anyRate = fc.oneof(
  fc.integer({ min: 1, max: 500 }),
  fc.double({ min: 0.5, max: 200, noNaN: true }),
);
const burst = fc.integer({ min: 4, max: 30 });

describe('tokenBucket properties', () => {
  it('matches an exact integer model: every decision, remaining and retryAfterMs', () => {
    // With whole-number rates and whole-millisecond steps, tokens × 1000 are integers, so the
    // model below is exact and the bucket must agree with it on every answer.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2_000 }), burst, arrivals, (ratePerSec, cap, steps) => {
        const clock = createVirtualClock();
        const bucket = tokenBucket({ ratePerSec, burst: cap, clock });
        let milli = cap * 1000;
        for (const { gapMs, n } of steps) {
          clock.advanceSync(gapMs);
          milli = Math.min(cap * 1000, milli + gapMs * ratePerSec);
          const r = bucket.tryTake(n);
          if (milli >= n * 1000) {
            milli -= n * 1000;
            expect(r).toEqual({ ok: true, remaining: Math.floor(milli / 1000) });
          } else {
            const exact = Math.ceil((n * 1000 - milli) / ratePerSec);
            expect(r).toEqual({ ok: false, retryAfterMs: Math.max(1, exact) });
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('in any window w, admits at most burst + ratePerSec × w tokens', () => {
    fc.assert(
      fc.property(anyRate, burst, arrivals, (ratePerSec, cap, steps) => {
        const clock = createVirtualClock();
        const bucket = tokenBucket({ ratePerSec, burst: cap, clock });
        const admitted: { at: number; n: number }[] = [];
        for (const { gapMs, n } of steps) {
          clock.advanceSync(gapMs);
          if (bucket.tryTake(n).ok) admitted.push({ at: clock.now(), n });
        }
        for (let i = 0; i < admitted.length; i++) {
          let tokens = 0;
          for (let j = i; j < admitted.length; j++) {
            tokens += admitted[j]!.n;
            const windowMs = admitted[j]!.at - admitted[i]!.at;
            expect(tokens).toBeLessThanOrEqual(cap + (ratePerSec * windowMs) / 1000 + 1e-6);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('waiting retryAfterMs is always enough, for any rate', () => {
    fc.assert(
      fc.property(anyRate, burst, arrivals, (ratePerSec, cap, steps) => {
        const clock = createVirtualClock();
        const bucket = tokenBucket({ ratePerSec, burst: cap, clock });
        for (const { gapMs, n } of steps) {
          clock.advanceSync(gapMs);
          const r = bucket.tryTake(n);
          if (r.ok) continue;
          expect(r.retryAfterMs).toBeGreaterThanOrEqual(1);
          expect(Number.isInteger(r.retryAfterMs)).toBe(true);
          clock.advanceSync(r.retryAfterMs);
          expect(bucket.tryTake(n).ok).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});
