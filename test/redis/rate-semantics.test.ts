// What each quota script promises, as properties over arrival times pinned by the `nowUs`
// override (fast-check picks the times; a real Redis runs the scripts):
// - healthy traffic is never refused: requests at least one interval (W / N, or 1 / rate)
//   apart never are, by any algorithm, whatever the phase against the windows; GCRA also
//   takes requests up to (burst - 1) intervals early;
// - the limit still holds for any traffic: at most N in any aligned window (both windows),
//   the sliding window's weighted estimate never above N + 1, GCRA within burst + rate × Δ;
// - a refusal's wait is enough, and at most a millisecond more than needed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fixedWindowScript,
  gcraScript,
  slidingWindowScript,
  type RedisScript,
} from '../../src/redis/scripts.js';
import { scriptsForSuite, sharedRedisMissing } from './helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping Redis rate semantics tests: ${missing}`);

const epoch = 1_700_000_000_000_000; // µs; arrival times are offsets from here
const runs = { numRuns: 60 };

/** A limit of `limit` per `windowMs`, the interval W / N in µs, and the window in µs. */
interface Quota {
  readonly limit: number;
  readonly windowMs: number;
}
const intervalUs = (q: Quota): number => (q.windowMs * 1000) / q.limit;
/** The window as the scripts hold it: whole µs, rounded down. */
const windowUs = (q: Quota): number => Math.max(1, Math.floor(q.windowMs * 1000));

// Small limits are where rounding bites; windows include fractional ones (burst / rate).
const quota: fc.Arbitrary<Quota> = fc.record({
  limit: fc.integer({ min: 1, max: 15 }),
  windowMs: fc.oneof(
    fc.constantFrom(100, 1000, 3000 / 7, 100 / 3),
    fc.integer({ min: 5, max: 500 }),
  ),
});

describe.skipIf(missing !== undefined)('quota scripts (time pinned, properties)', () => {
  const redis = scriptsForSuite('semantics');

  /** One take of `need` at `atUs`; the reply as numbers. */
  type Take = (atUs: number, need?: number) => Promise<number[]>;
  const taker = (s: RedisScript, q: Quota): Take => {
    const k = redis.key();
    // GCRA gets the same quota as a bucket: burst N, one token per W / N.
    const period = s === gcraScript ? intervalUs(q) : q.windowMs;
    return async (atUs, need = 1) => {
      const r = await redis.sc.run(s, [k], [period, q.limit, need, need, '', epoch + atUs]);
      // Keys expire on Redis's own clock, which does not wait for the pinned one: a state
      // that expired while the machine was busy would look full. (Expiry has its own tests.)
      await redis.c.command(['PERSIST', k]);
      return r as number[];
    };
  };
  const scripts: [string, RedisScript][] = [
    ['gcra', gcraScript],
    ['fixed window', fixedWindowScript],
    ['sliding window', slidingWindowScript],
  ];

  /** Arrival times (µs) each at least `minGap(q)` after the one before, from a random phase. */
  const spaced = (minGap: (q: Quota) => number) =>
    quota.chain((q) =>
      fc
        .tuple(
          fc.constant(q),
          fc.integer({ min: 0, max: 10_000_000 }),
          fc.array(fc.integer({ min: 0, max: 3 * Math.ceil(intervalUs(q)) }), {
            minLength: 5,
            maxLength: 40,
          }),
        )
        .map(([q, phase, extra]) => {
          const gap = minGap(q);
          let t = phase;
          return { q, times: extra.map((e, i) => (i === 0 ? t : (t += gap + e))) };
        }),
    );

  describe.each(scripts)('%s', (_, s) => {
    it('never refuses requests at least one interval apart, at any phase', async () => {
      // Whole µs, as Redis's clock gives them, rounded up so no gap is shorter.
      const arrivals = spaced((q) => Math.ceil(intervalUs(q)));
      await fc.assert(
        fc.asyncProperty(arrivals, async ({ q, times }) => {
          const take = taker(s, q);
          for (const t of times) expect((await take(t))[0], `at ${t} µs`).toBe(1);
        }),
        runs,
      );
    });

    it('never refuses a client exactly at the rate from the first take', async () => {
      // The edge fast-check may miss: arrivals exactly on window starts, no jitter at all.
      for (const q of [
        { limit: 3, windowMs: 100 },
        { limit: 15, windowMs: 100 },
        { limit: 1, windowMs: 100 },
      ]) {
        const take = taker(s, q);
        const step = intervalUs(q);
        for (let i = 0; i < 10 * q.limit; i++) expect((await take(i * step))[0]).toBe(1);
      }
    });

    it("a refusal's wait is enough, and at most a millisecond more than needed", async () => {
      const bursty = quota.chain((q) =>
        fc.tuple(
          fc.constant(q),
          fc.array(fc.integer({ min: 0, max: 2 * windowUs(q) }), {
            minLength: 1,
            maxLength: 30,
          }),
        ),
      );
      await fc.assert(
        fc.asyncProperty(bursty, async ([q, gaps]) => {
          const take = taker(s, q);
          let t = 0;
          for (const gap of gaps) {
            t += gap;
            const r = await take(t);
            if (r[0] === 1) continue;
            const waitUs = r[2]! * 1000;
            if (waitUs > 1000) expect((await take(t + waitUs - 1000))[0], 'a ms early').toBe(0);
            expect((await take(t + waitUs))[0], `after the ${r[2]} ms it said`).toBe(1);
            t += waitUs;
          }
        }),
        runs,
      );
    });
  });

  it('GCRA takes requests up to (burst - 1) intervals early', async () => {
    const count = 40;
    const early = fc
      .record({ limit: fc.integer({ min: 2, max: 15 }), windowMs: quota.map((q) => q.windowMs) })
      .chain((q) => {
        const step = intervalUs(q);
        // Less a microsecond per request: the stored arrival time is rounded up to whole µs
        // at each grant, so that rounding never admits early.
        const tolerance = (q.limit - 1) * step - count;
        return fc
          .array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 5, maxLength: count })
          .map((jitter) => ({
            q,
            // Request i is due at i × step and comes up to `tolerance` early, after the one
            // ahead of it (Redis runs one script at a time, at least a microsecond apart).
            times: jitter.reduce<number[]>((ts, j, i) => {
              const at = Math.max(Math.ceil(i * step - j * tolerance), (ts.at(-1) ?? -1) + 1);
              return [...ts, at];
            }, []),
          }));
      });
    await fc.assert(
      fc.asyncProperty(early, async ({ q, times }) => {
        const take = taker(gcraScript, q);
        for (const t of times) expect((await take(t))[0], `at ${t} µs`).toBe(1);
      }),
      runs,
    );
  });

  describe('the limit still holds for any traffic', () => {
    // Bursts and pauses: several takes at one instant, gaps up to two windows.
    const traffic = quota.chain((q) =>
      fc.tuple(
        fc.constant(q),
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 2 * windowUs(q) }),
            fc.integer({ min: 1, max: q.limit }),
          ),
          { minLength: 1, maxLength: 60 },
        ),
      ),
    );
    /** Runs the traffic; the admitted takes as [time µs, cost]. */
    const admitted = async (s: RedisScript, q: Quota, steps: [number, number][]) => {
      const take = taker(s, q);
      const got: [number, number][] = [];
      let t = 0;
      for (const [gap, need] of steps) {
        t += gap;
        const [granted = 0] = await take(t, need);
        if (granted > 0) got.push([t, granted]);
      }
      return got;
    };
    const perWindow = (q: Quota, got: [number, number][]): Map<number, number> => {
      const counts = new Map<number, number>();
      for (const [t, cost] of got) {
        const w = Math.floor((epoch + t) / windowUs(q));
        counts.set(w, (counts.get(w) ?? 0) + cost);
      }
      return counts;
    };

    it.each([
      ['fixed window', fixedWindowScript],
      ['sliding window', slidingWindowScript],
    ] as const)('%s: at most N in any aligned window', async (_, s) => {
      await fc.assert(
        fc.asyncProperty(traffic, async ([q, steps]) => {
          for (const count of perWindow(q, await admitted(s, q, steps)).values()) {
            expect(count).toBeLessThanOrEqual(q.limit);
          }
        }),
        runs,
      );
    });

    it('sliding window: the weighted estimate never above N + 1', async () => {
      await fc.assert(
        fc.asyncProperty(traffic, async ([q, steps]) => {
          const got = await admitted(slidingWindowScript, q, steps);
          const counts = new Map<number, number>();
          const W = windowUs(q);
          for (const [t, cost] of got) {
            const w = Math.floor((epoch + t) / W);
            counts.set(w, (counts.get(w) ?? 0) + cost);
            // At the end of the microsecond Redis's clock reports.
            const overlap = Math.max(0, W - (epoch + t - w * W) - 1);
            const estimate = ((counts.get(w - 1) ?? 0) * overlap) / W;
            expect(estimate + counts.get(w)!).toBeLessThanOrEqual(q.limit + 1 + 1e-9);
          }
        }),
        runs,
      );
    });

    it('GCRA: within burst + rate × Δ over any span', async () => {
      await fc.assert(
        fc.asyncProperty(traffic, async ([q, steps]) => {
          const got = await admitted(gcraScript, q, steps);
          for (let i = 0; i < got.length; i++) {
            let sum = 0;
            for (let j = i; j < got.length; j++) {
              sum += got[j]![1];
              const span = got[j]![0] - got[i]![0];
              expect(sum).toBeLessThanOrEqual(q.limit + span / intervalUs(q) + 1e-9);
            }
          }
        }),
        runs,
      );
    });
  });
});
