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

  it('never evicts a pinned key while an unpinned one is there; unpinned, it is the newest', () => {
    const lru = new LruMap<number>(3);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect(lru.pin('a')).toBe(true);
    expect(lru.pin('a')).toBe(false);
    expect(lru.pin('zz')).toBe(false);
    lru.set('d', 4); // evicts b, the oldest unpinned, not a
    lru.set('e', 5); // evicts c
    expect(lru.peek('a')).toBe(1);
    expect([...lru.keys()]).toEqual(['e', 'd']);
    expect(lru.get('a')).toBe(1);
    lru.unpin('a');
    expect([...lru.keys()]).toEqual(['a', 'e', 'd']);
    expect(lru.pinned).toBe(0);
  });

  it('keeps its bound when every key is pinned, evicting the first pinned', () => {
    const lru = new LruMap<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.pin('a');
    lru.pin('b');
    lru.set('c', 3);
    expect(lru.size).toBe(2);
    expect(lru.peek('a')).toBeUndefined();
    expect(lru.pinned).toBe(1);
    expect(lru.delete('b')).toBe(true);
    expect(lru.pinned).toBe(0);
    expect([...lru.keys()]).toEqual(['c']);
  });

  it('with pins, stays a reference LRU over the unpinned keys for any sequence', () => {
    const op = fc.record({
      kind: fc.constantFrom('set', 'get', 'delete', 'pin', 'unpin'),
      key: fc.integer({ min: 0, max: 8 }),
    });
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 6 }), fc.array(op, { maxLength: 200 }), (max, ops) => {
        const lru = new LruMap<number>(max);
        let recency: string[] = []; // unpinned, most recent first
        const pinned = new Set<string>();
        for (const { kind, key } of ops) {
          const k = String(key);
          const has = recency.includes(k) || pinned.has(k);
          if (kind === 'pin' && pinned.size >= max - 1) continue; // callers keep one key free
          if (kind === 'set') {
            if (pinned.has(k)) {
              lru.set(k, key);
              continue;
            }
            recency = [k, ...recency.filter((x) => x !== k)];
            if (recency.length + pinned.size > max) recency = recency.slice(0, max - pinned.size);
            lru.set(k, key);
          } else if (kind === 'get') {
            expect(lru.get(k)).toBe(has ? key : undefined);
            if (recency.includes(k)) recency = [k, ...recency.filter((x) => x !== k)];
          } else if (kind === 'delete') {
            expect(lru.delete(k)).toBe(has);
            recency = recency.filter((x) => x !== k);
            pinned.delete(k);
          } else if (kind === 'pin') {
            expect(lru.pin(k)).toBe(recency.includes(k));
            if (recency.includes(k)) {
              recency = recency.filter((x) => x !== k);
              pinned.add(k);
            }
          } else {
            lru.unpin(k);
            if (pinned.delete(k)) recency = [k, ...recency];
          }
          expect([...lru.keys()]).toEqual(recency);
          expect(lru.pinned).toBe(pinned.size);
          expect(lru.size).toBe(recency.length + pinned.size);
          expect(lru.size).toBeLessThanOrEqual(max);
        }
      }),
    );
  });
});
