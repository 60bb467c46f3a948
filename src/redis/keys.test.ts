// The key layout: exactly one hash tag whatever the ids, plain ids kept readable, and an
// encoding that is injective — distinct (name, id) pairs never share a key, however the
// ids are built from separators, escapes or another id's digest.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeKeyPart, hashTag, redisKey, redisKeyFor } from './keys.js';

const key = ([name, id]: readonly [string, string]): string => redisKey('p', { name, id }, 'gcra');

/** Text made mostly of what the encoding treats specially, so near-collisions are common. */
const tricky = fc.oneof(
  fc.string({ maxLength: 12, unit: fc.constantFrom(':', '%', '3', 'A', '#', 'h', 'a', '{', '}') }),
  fc.string({ maxLength: 40 }),
  fc.string({ minLength: 120, maxLength: 140, unit: fc.constantFrom('a', ':') }),
);
const pair = fc.tuple(tricky, tricky);

describe('key layout', () => {
  it('always emits exactly one hash tag, whatever the ids', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), (name, id) => {
        const k = redisKey('p', { name, id }, 'gcra');
        expect(k.split('{').length).toBe(2);
        expect(k.split('}').length).toBe(2);
        expect(hashTag(k)).toBe(`${encodeKeyPart(name)}:${encodeKeyPart(id)}`);
      }),
    );
  });

  it('redisKeyFor builds the same key as redisKey, for every name, id and kind', () => {
    const kind = fc.constantFrom('gcra', 'fw', 'sw', 'lease:z', 'pb:s');
    fc.assert(
      fc.property(tricky, tricky, tricky, kind, (prefix, name, id, k) => {
        expect(redisKeyFor(prefix, name, k)(id)).toBe(redisKey(prefix, { name, id }, k));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps plain ids readable, escapes their colons, and digests the rest', () => {
    expect(redisKey('spw', { name: 'api', id: 'u42' }, 'gcra')).toBe('spw:{api:u42}:gcra');
    expect(redisKey('spw', { name: 'login', id: '2001:db8::1' }, 'fw')).toBe(
      'spw:{login:2001%3Adb8%3A%3A1}:fw',
    );
    expect(encodeKeyPart('a{b}')).toMatch(/^#[\w-]{43}$/);
    expect(encodeKeyPart('x'.repeat(200))).toMatch(/^#/);
    expect(encodeKeyPart('')).toMatch(/^#/);
    expect(encodeKeyPart('50%')).toMatch(/^#/);
  });

  it('distinct (name, id) pairs never give the same key', () => {
    // Many pairs at once from a tiny alphabet: a set of 60 holds aliasing candidates often.
    const small = fc.string({ maxLength: 4, unit: fc.constantFrom(':', 'a', 'h') });
    const distinctPairs = (p: fc.Arbitrary<[string, string]>) =>
      fc.uniqueArray(p, { maxLength: 60, selector: (x) => JSON.stringify(x) });
    fc.assert(
      fc.property(distinctPairs(fc.tuple(small, small)), distinctPairs(pair), (few, many) => {
        for (const pairs of [few, many]) expect(new Set(pairs.map(key)).size).toBe(pairs.length);
      }),
      { numRuns: 500 },
    );
  });

  it('a separator moved between name and id, or an id that is another id encoded, is another key', () => {
    fc.assert(
      fc.property(tricky, tricky, tricky, (x, y, z) => {
        expect(key([x, `${y}:${z}`])).not.toBe(key([`${x}:${y}`, z]));
        const encoded = encodeKeyPart(y);
        if (encoded !== y) expect(key([x, encoded])).not.toBe(key([x, y]));
      }),
      { numRuns: 2_000 },
    );
    expect(key(['api', 'v2:bob'])).not.toBe(key(['api:v2', 'bob']));
  });

  it('a written part decodes to exactly one input', () => {
    // Plain parts reverse by unescaping; digests are recognisable by their first character.
    fc.assert(
      fc.property(tricky, (part) => {
        const written = encodeKeyPart(part);
        expect(written).not.toMatch(/[:{}]/);
        if (written.startsWith('#')) expect(written).toMatch(/^#[\w-]{43}$/);
        else expect(written.replaceAll('%3A', ':')).toBe(part);
      }),
    );
  });
});
