import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { creditGate } from './credit-gate.js';

const settle = () => new Promise((resolve) => setImmediate(resolve));

const op = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'send' as const, pick: 0 }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'tryTake' as const, pick: 0 }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('request' as const), pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.constant({ kind: 'consume' as const, pick: 0 }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'end' as const, pick: 0 }) },
);

interface Item {
  readonly id: number;
  readonly controller: AbortController;
  settled: number;
  delivered: boolean;
}

describe('creditGate properties', () => {
  it('items in flight never exceed the credit granted; nothing lost, nothing duplicated', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(op, { minLength: 1, maxLength: 120 }),
        fc.constantFrom('cancel', 'complete', 'bad-request'),
        async (maxCredit, maxWaiting, ops, ending) => {
          const gate = creditGate({ maxCredit, maxWaiting });
          // The receiver's buffer holds what was delivered and not yet consumed: it asks only
          // for what it has room for, so it must never overflow.
          const buffer: number[] = [];
          const items: Item[] = [];
          const deliveredOrder: number[] = [];
          let requested = 0;
          let granted = 0;
          const deliver = (id: number) => {
            granted++;
            buffer.push(id);
            deliveredOrder.push(id);
            expect(buffer.length).toBeLessThanOrEqual(maxCredit);
          };
          for (const o of ops) {
            if (o.kind === 'send') {
              const item: Item = {
                id: items.length,
                controller: new AbortController(),
                settled: 0,
                delivered: false,
              };
              items.push(item);
              gate.send({ signal: item.controller.signal }).then(
                () => {
                  item.settled++;
                  item.delivered = true;
                  deliver(item.id);
                },
                () => item.settled++,
              );
            } else if (o.kind === 'tryTake') {
              if (gate.state === 'open' && gate.tryTake()) deliver(-1);
            } else if (o.kind === 'request') {
              const room = maxCredit - buffer.length - gate.credit;
              if (room > 0) {
                const n = 1 + (o.pick % room);
                requested += n;
                gate.request(n);
              }
            } else if (o.kind === 'consume') {
              buffer.shift();
            } else if (o.kind === 'abort') {
              const pending = items.filter((i) => i.settled === 0);
              if (pending.length > 0) pending[o.pick % pending.length]!.controller.abort();
            } else if (gate.state === 'open') {
              if (ending === 'cancel') gate.cancel();
              else if (ending === 'complete') gate.complete();
              else gate.request(0);
            }
            await settle();
            expect(granted).toBeLessThanOrEqual(requested);
            expect(gate.credit + granted).toBeLessThanOrEqual(requested);
          }
          if (gate.state === 'open') gate.cancel();
          await settle();
          // Every send answered exactly once, none delivered twice, in the order sent.
          for (const item of items) {
            expect(item.settled).toBe(1);
            expect(getEventListeners(item.controller.signal, 'abort')).toHaveLength(0);
          }
          const ids = deliveredOrder.filter((id) => id >= 0);
          expect(new Set(ids).size).toBe(ids.length);
          expect(ids).toEqual([...ids].sort((a, b) => a - b));
          expect(ids.length).toBe(items.filter((i) => i.delivered).length);
          expect(gate.waiting).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
