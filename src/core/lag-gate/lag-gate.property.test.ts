import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { lagGate, type LagReading } from './lag-gate.js';

/** After `gapMs`: the producer offers `offer` messages, the consumer finishes `drain`. */
const step = fc.record({
  gapMs: fc.integer({ min: 0, max: 120 }),
  offer: fc.integer({ min: 0, max: 8 }),
  drain: fc.integer({ min: 0, max: 6 }),
  publishMs: fc.integer({ min: 0, max: 150 }),
});

describe('lagGate properties', () => {
  it('the backlog never exceeds maxLag plus what was in flight at a reading', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 200 }),
        fc.array(step, { minLength: 1, maxLength: 60 }),
        async (maxLag, initial, pollMs, readMs, steps) => {
          const clock = createVirtualClock();
          // The broker's backlog, the admitted messages not yet published (by admission
          // number); `missed`: those the last reading did not see that were admitted before its
          // read began, and `bound`: maxLag plus `missed` as it stood at the last admission.
          let backlog = initial;
          let admittedCount = 0;
          const inFlight = new Set<number>();
          let missed = 0;
          let bound = initial;
          const readLag = (): LagReading | Promise<LagReading> => {
            const startedWith = admittedCount;
            const answer = (): LagReading => {
              let before = 0;
              for (const seq of inFlight) if (seq < startedWith) before++;
              missed = before;
              return { messages: backlog };
            };
            if (readMs === 0) return answer();
            return new Promise((resolve) => clock.setTimer(readMs, () => resolve(answer())));
          };
          const gate = lagGate({
            readLag,
            maxLag,
            pollMs,
            staleAfterMs: pollMs + readMs + 1,
            clock,
          });
          for (const s of steps) {
            await clock.advance(s.gapMs);
            backlog -= Math.min(backlog, s.drain);
            for (let i = 0; i < s.offer; i++) {
              if (!gate.tryAdmit().ok) continue;
              bound = maxLag + missed;
              const seq = admittedCount++;
              inFlight.add(seq);
              clock.setTimer(s.publishMs, () => {
                inFlight.delete(seq);
                backlog++;
                expect(backlog).toBeLessThanOrEqual(bound);
              });
            }
          }
          await clock.runAll();
          expect(inFlight.size).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
