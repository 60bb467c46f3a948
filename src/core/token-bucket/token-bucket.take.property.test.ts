import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { tokenBucket } from './token-bucket.js';

/** After `gapMs`: a waiting take, a tryTake, or an abort of the `pick`-th take still pending. */
const step = fc.record({
  gapMs: fc.integer({ min: 0, max: 300 }),
  kind: fc.constantFrom('take', 'take', 'tryTake', 'abort'),
  n: fc.integer({ min: 1, max: 4 }),
  maxWaitMs: fc.option(fc.integer({ min: 0, max: 2_000 }), { nil: undefined }),
  pick: fc.nat(),
});

interface Taken {
  readonly seq: number;
  readonly at: number;
  readonly n: number;
  readonly maxWaitMs: number;
  readonly controller: AbortController;
  settled: number;
  grantedAt?: number;
}

describe('tokenBucket.take properties', () => {
  it('grants in arrival order, within maxWaitMs, within the bucket bound, and leaves nothing behind', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 4, max: 30 }),
        fc.integer({ min: 0, max: 12 }),
        fc.array(step, { minLength: 1, maxLength: 80 }),
        async (ratePerSec, burst, maxWaiting, steps) => {
          const clock = createVirtualClock();
          const bucket = tokenBucket({ ratePerSec, burst, maxWaiting, clock });
          const takes: Taken[] = [];
          const grants: { at: number; n: number; seq: number }[] = [];
          let seq = 0;
          for (const s of steps) {
            await clock.advance(s.gapMs);
            if (s.kind === 'tryTake') {
              const waiting = bucket.waiting;
              if (bucket.tryTake(s.n).ok) {
                expect(waiting).toBe(0); // no barging past a waiter
                grants.push({ at: clock.now(), n: s.n, seq: seq++ });
              }
            } else if (s.kind === 'take') {
              const controller = new AbortController();
              const t: Taken = {
                seq: seq++,
                at: clock.now(),
                n: s.n,
                maxWaitMs: s.maxWaitMs ?? Infinity,
                controller,
                settled: 0,
              };
              takes.push(t);
              bucket.take({ n: s.n, maxWaitMs: s.maxWaitMs, signal: controller.signal }).then(
                () => {
                  t.settled++;
                  t.grantedAt = clock.now();
                  grants.push({ at: clock.now(), n: t.n, seq: t.seq });
                },
                () => t.settled++,
              );
            } else {
              const pending = takes.filter((t) => t.settled === 0);
              if (pending.length > 0) pending[s.pick % pending.length]!.controller.abort();
            }
          }
          await clock.advance(0);
          for (const t of takes) t.controller.abort();
          await clock.flush();
          // Nothing lost, nothing twice; nothing left behind.
          for (const t of takes) {
            expect(t.settled).toBe(1);
            expect(getEventListeners(t.controller.signal, 'abort')).toHaveLength(0);
            if (t.grantedAt !== undefined)
              expect(t.grantedAt - t.at).toBeLessThanOrEqual(t.maxWaitMs);
          }
          expect(bucket.waiting).toBe(0);
          expect(clock.pendingTimers).toBe(0);
          // In arrival order, and never more than burst + rate × window, where a waiter's window
          // counts from when its tokens were due: it is served on the next millisecond tick as
          // of that moment (so a tick's rounding never slows the rate), hence the 1 ms.
          for (let i = 1; i < grants.length; i++) {
            expect(grants[i]!.seq).toBeGreaterThan(grants[i - 1]!.seq);
          }
          for (let i = 0; i < grants.length; i++) {
            let tokens = 0;
            for (let j = i; j < grants.length; j++) {
              tokens += grants[j]!.n;
              const windowMs = grants[j]!.at - grants[i]!.at;
              expect(tokens).toBeLessThanOrEqual(
                burst + (ratePerSec * (windowMs + 1)) / 1000 + 1e-6,
              );
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('an uncontended line is work-conserving: waiters are granted the moment their tokens are due', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 30 }),
        async (ratePerSec, burst, wants) => {
          const clock = createVirtualClock();
          const bucket = tokenBucket({ ratePerSec, burst, maxWaiting: 100, clock });
          bucket.tryTake(burst);
          const grantedAt: number[] = [];
          const ns = wants.map((w) => Math.min(w, burst));
          const all = ns.map((n) => bucket.take({ n }).then(() => grantedAt.push(clock.now())));
          await clock.runAll();
          await Promise.all(all);
          // The k-th grant comes when the tokens of the first k are due, rounded up to the ms.
          let tokens = 0;
          ns.forEach((n, k) => {
            tokens += n;
            const exact = (tokens * 1000) / ratePerSec;
            expect(grantedAt[k]).toBeGreaterThanOrEqual(exact - 1e-6);
            expect(grantedAt[k]).toBeLessThan(exact + 1 + 1e-6);
          });
        },
      ),
      { numRuns: 150 },
    );
  });
});
