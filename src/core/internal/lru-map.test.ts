import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LruMap } from './lru-map.js';

describe('LruMap', () => {
  it('evicts the least recently used key, where get refreshes recency and peek does not', () => {
    const lru = new LruMap<number>(3);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    lru.get('a');
    lru.peek('b');
    lru.set('d', 4);
    expect([...lru.keys()]).toEqual(['d', 'a', 'c']);
    expect(lru.evictions).toBe(1);
    expect(lru.delete('a')).toBe(true);
    expect(lru.delete('a')).toBe(false);
    expect([...lru.keys()]).toEqual(['d', 'c']);
  });

  it('behaves like a reference LRU for any sequence of operations', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 12 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 200 }), (max, ops) => {
        const lru = new LruMap<number>(max);
        let reference: string[] = []; // most recent first
        for (const { kind, key } of ops) {
          const k = String(key);
          const has = reference.includes(k);
          if (kind === 'set') {
            reference = [k, ...reference.filter((x) => x !== k)].slice(0, max);
            lru.set(k, key);
          } else if (kind === 'get') {
            expect(lru.get(k)).toBe(has ? key : undefined);
            if (has) reference = [k, ...reference.filter((x) => x !== k)];
          } else {
            expect(lru.delete(k)).toBe(has);
            reference = reference.filter((x) => x !== k);
          }
          expect([...lru.keys()]).toEqual(reference);
          expect(lru.size).toBeLessThanOrEqual(max);
        }
      }),
    );
  });
});
