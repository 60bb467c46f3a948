// The throttle against traffic shaped as real callers shape it, in virtual time: requests in
// flight for a while before their outcome is known, bursts as large as a caller's cap, idle
// spells longer than the window. A dependency that never refuses is never throttled; one that
// refuses a fraction f of what it receives is throttled as the SRE rule says for f.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { adaptiveThrottle } from './adaptive-throttle.js';

/** A seeded source of uniform numbers in [0, 1). */
function seeded(seed: number): () => number {
  // Park–Miller: the state must stay in [1, 2^31 − 2], or it sticks at 0.
  let s = (seed % 2_147_483_646) + 1;
  return () => {
    s = (s * 48_271) % 2_147_483_647;
    return s / 2_147_483_647;
  };
}

/** One wave of calls: `size` at once, each answered after up to `latencyMs`, then `gapMs` of quiet. */
interface Wave {
  readonly size: number;
  readonly latencyMs: number;
  readonly gapMs: number;
}

const wave = fc.record({
  size: fc.integer({ min: 1, max: 64 }),
  latencyMs: fc.integer({ min: 1, max: 3_000 }),
  // Up to 2.5 windows of quiet: the window empties, and the next wave meets a cold throttle.
  gapMs: fc.oneof(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 300_000 })),
});

describe('adaptiveThrottle in flight', () => {
  it('never refuses a dependency that never refuses: any bursts, any overlap, any idle spells', () => {
    fc.assert(
      fc.property(fc.array(wave, { minLength: 1, maxLength: 30 }), fc.nat(), (waves, seed) => {
        const random = seeded(seed);
        const clock = createVirtualClock();
        const throttle = adaptiveThrottle({ clock, random: () => 0 });
        // Answers due, in time order (bounded: at most the calls of the waves in flight).
        let due: number[] = [];
        const answerUntil = (t: number) => {
          due.sort((a, b) => a - b);
          let i = 0;
          for (; i < due.length && due[i]! <= t; i++) {
            clock.advanceSync(due[i]! - clock.now());
            throttle.recordAccept();
          }
          due = due.slice(i);
          clock.advanceSync(t - clock.now());
        };
        for (const w of waves as Wave[]) {
          for (let i = 0; i < w.size; i++) {
            expect(throttle.tryRequest().ok).toBe(true);
            due.push(clock.now() + 1 + Math.floor(random() * w.latencyMs));
          }
          answerUntil(clock.now() + w.gapMs);
        }
        answerUntil(clock.now() + 3_000);
        expect(throttle.rejectProbability()).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('throttles a dependency refusing a fraction f as the SRE rule does: none for f ≤ 0.3, the ceiling for f ≥ 0.7', () => {
    // With k = 2 the rule settles at p = 0 while k·(1 − f) > 1 and at its ceiling while
    // k·(1 − f) < 1 (ever more slowly as f nears 0.5, so the bands stop short of it).
    // Tolerance: the mean probability over the fifth and sixth minutes is within 0.05 of that.
    fc.assert(
      fc.property(
        fc.oneof(fc.double({ min: 0, max: 0.3 }), fc.double({ min: 0.7, max: 0.98 })),
        fc.integer({ min: 5, max: 50 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.nat(),
        (f, perSec, latencyMs, seed) => {
          const random = seeded(seed);
          const clock = createVirtualClock();
          const throttle = adaptiveThrottle({ clock, random });
          const pending: { at: number; accepted: boolean }[] = [];
          let sum = 0;
          let samples = 0;
          const stepMs = 1_000 / perSec;
          for (let t = 0; t < 360_000; t += stepMs) {
            clock.advanceSync(t - clock.now());
            while (pending.length > 0 && pending[0]!.at <= t) {
              if (pending.shift()!.accepted) throttle.recordAccept();
              else throttle.recordRefusal();
            }
            if (throttle.tryRequest().ok) {
              pending.push({ at: t + latencyMs, accepted: random() >= f });
            }
            if (t >= 240_000) {
              sum += throttle.rejectProbability();
              samples++;
            }
          }
          const expected = 2 * (1 - f) > 1 ? 0 : 0.9;
          expect(Math.abs(sum / samples - expected)).toBeLessThanOrEqual(0.05);
        },
      ),
      { numRuns: 40 },
    );
  });
});
