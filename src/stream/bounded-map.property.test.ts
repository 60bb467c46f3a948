// Properties of boundedMap under every interleaving fast-check's scheduler picks: calls in flight
// never exceed `concurrency`, items held never exceed `concurrency + maxBuffered`, every item
// comes out exactly once (in source order when ordered), and a failure reaches the consumer
// once with nothing left running and the source closed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedMap } from './bounded-map.js';

const shape = {
  concurrency: fc.integer({ min: 1, max: 4 }),
  maxBuffered: fc.integer({ min: 0, max: 4 }),
  ordered: fc.boolean(),
  n: fc.integer({ min: 0, max: 25 }),
  asyncSource: fc.boolean(),
};

describe('boundedMap properties', () => {
  it('holds its bounds and loses, duplicates or reorders nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.record(shape),
        async (s, { concurrency, maxBuffered, ordered, n, asyncSource }) => {
          const capacity = concurrency + maxBuffered;
          let pulled = 0;
          let taken = 0;
          let closed = false;
          const check = () => {
            expect(it.active).toBeLessThanOrEqual(concurrency);
            expect(it.active + it.buffered).toBeLessThanOrEqual(capacity);
            // Pulled but not yet in the consumer's hands: held, plus one handed over.
            expect(pulled - taken).toBeLessThanOrEqual(capacity + 1);
          };
          function* syncItems() {
            try {
              for (let i = 0; i < n; i++) {
                pulled++;
                yield i;
              }
            } finally {
              closed = true;
            }
          }
          async function* asyncItems() {
            for (const i of syncItems()) yield await s.schedule(Promise.resolve(i), 'pull');
          }
          const it = boundedMap(
            asyncSource ? asyncItems() : syncItems(),
            async (x: number) => {
              check();
              return s.schedule(Promise.resolve(x), `fn ${x}`);
            },
            { concurrency, maxBuffered, ordered },
          );
          const out: number[] = [];
          const consumer = (async () => {
            for await (const v of it) {
              taken++;
              check();
              out.push(v);
              await s.schedule(Promise.resolve(), 'consumer');
            }
          })();
          await s.waitFor(consumer);
          const all = Array.from({ length: n }, (_, i) => i);
          expect(ordered ? out : [...out].sort((a, b) => a - b)).toEqual(all);
          expect(it.active).toBe(0);
          expect(closed).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reports a failure once, with nothing left running and the source closed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.record({ ...shape, n: fc.integer({ min: 1, max: 25 }) }),
        fc.nat(),
        fc.integer({ min: 0, max: 10 }),
        async (s, { concurrency, maxBuffered, ordered, n, asyncSource }, failAt, stopAfter) => {
          const failing = failAt % n;
          let closed = false;
          function* syncItems() {
            try {
              for (let i = 0; i < n; i++) yield i;
            } finally {
              closed = true;
            }
          }
          async function* asyncItems() {
            for (const i of syncItems()) yield await s.schedule(Promise.resolve(i), 'pull');
          }
          let running = 0;
          const boom = new Error('boom');
          const it = boundedMap(
            asyncSource ? asyncItems() : syncItems(),
            async (x: number, { signal }) => {
              running++;
              try {
                await s.schedule(Promise.resolve(), `fn ${x}`);
                if (x === failing) throw boom;
                signal.throwIfAborted();
                return x;
              } finally {
                running--;
              }
            },
            { concurrency, maxBuffered, ordered },
          );
          const errors: unknown[] = [];
          let count = 0;
          const consumer = (async () => {
            try {
              for await (const _ of it) {
                // Some consumers leave early: the same clean-up, and no error to see.
                if (++count > stopAfter) break;
                await s.schedule(Promise.resolve(), 'consumer');
              }
            } catch (error) {
              errors.push(error);
            }
            // Asking again after the end answers done, never the error a second time.
            expect(await it.next()).toEqual({ done: true, value: undefined });
          })();
          await s.waitFor(consumer);
          expect(errors.length).toBeLessThanOrEqual(1);
          if (count <= stopAfter) expect(errors).toEqual([boom]);
          expect(running).toBe(0);
          expect(it.active).toBe(0);
          expect(closed).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});
