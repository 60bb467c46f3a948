// The asks a store builds once per policy: the same ask for the same policy, a new one when
// the policy's numbers change (in place or under the same name), the keys and strings exactly
// those the unprepared path builds, and a bounded memory of names.
import { describe, expect, it } from 'vitest';
import { AskMemo, maxMemoNames, maxVariants } from './ask-memo.js';
import { redisKey } from './keys.js';
import { takeAsk, windowAsk } from './rate-ask.js';

describe('AskMemo', () => {
  it('builds the same ask, key and strings as the unprepared path', () => {
    const memo = new AskMemo('spw', 'gcra');
    const policy = { name: 'api:v1', ratePerSec: 3, burst: 7 };
    const ask = memo.take(policy);
    expect(ask).toMatchObject(takeAsk('gcra', policy));
    for (const id of ['u42', '2001:db8::1', 'a{b}', '']) {
      const key = redisKey('spw', { name: policy.name, id }, 'gcra');
      expect(ask.keyOf(id)).toBe(key);
      expect(ask.keyOf(id) + ask.cacheSuffix).toBe(`${key}\u0000${ask.limit}\u0000${ask.period}`);
    }
    expect(ask.periodArg).toBe(String(1e6 / 3));
    const window = new AskMemo('spw', 'gcra').window({ name: 'w', limit: 5, windowMs: 1500 }, true);
    expect(window).toMatchObject(windowAsk({ name: 'w', limit: 5, windowMs: 1500 }, true));
    expect(window.keyOf('x')).toBe('spw:{w:x}:fw');
    expect(window.periodArg).toBe('1500');
  });

  it('returns the ask it built while the policy is unchanged, and a new one when it changes', () => {
    const memo = new AskMemo('spw', 'fixed-window');
    const policy = { name: 'api', ratePerSec: 10, burst: 10 };
    const first = memo.take(policy);
    expect(memo.take(policy)).toBe(first);
    // Another object with the same name and numbers is the same policy.
    expect(memo.take({ ...policy })).toBe(first);
    const changed = { ...policy, burst: 20 };
    const second = memo.take(changed);
    expect(second).not.toBe(first);
    expect(second.limit).toBe(20);
    expect(second.cacheSuffix).not.toBe(first.cacheSuffix);
    // Back to the first numbers: the first ask (a tier of a per-client quota comes back).
    expect(memo.take(policy)).toBe(first);
  });

  it(`keeps the last ${maxVariants} sets of numbers under one name: tiers of one quota`, () => {
    const memo = new AskMemo('spw', 'gcra');
    const tiers = Array.from({ length: maxVariants }, (_, i) => ({
      name: 'hour',
      ratePerSec: 10 * (i + 1),
      burst: 10 * (i + 1),
    }));
    const asks = tiers.map((t) => memo.take(t));
    for (let round = 0; round < 3; round++) {
      tiers.forEach((t, i) => expect(memo.take({ ...t })).toBe(asks[i]));
    }
    // One set more: the oldest leaves, and comes back built anew with its own numbers.
    memo.take({ name: 'hour', ratePerSec: 1, burst: 1 });
    const back = memo.take(tiers[0]!);
    expect(back).not.toBe(asks[0]);
    expect(back.limit).toBe(10);
    expect(memo.take(tiers.at(-1)!)).toBe(asks.at(-1));
  });

  it('keeps fixed and sliding windows apart under one name', () => {
    const memo = new AskMemo('p', 'gcra');
    const policy = { name: 'login', limit: 5, windowMs: 60_000 };
    expect(memo.window(policy, true).kind).toBe('fw');
    expect(memo.window(policy, false).kind).toBe('sw');
    expect(memo.window(policy, true).kind).toBe('fw');
  });

  it('refuses an unusable window every time, not only the first', () => {
    const memo = new AskMemo('p', 'gcra');
    const bad = { name: 'w', limit: 5, windowMs: 0 };
    expect(() => memo.window(bad, true)).toThrow(/policy\.windowMs/);
    expect(() => memo.window(bad, true)).toThrow(/policy\.windowMs/);
  });

  it(`remembers at most ${maxMemoNames} names, and answers the same past the bound`, () => {
    const memo = new AskMemo('p', 'gcra');
    const policies = Array.from({ length: maxMemoNames + 10 }, (_, i) => ({
      name: `n${i}`,
      ratePerSec: 1,
      burst: 1,
    }));
    const asks = policies.map((p) => memo.take(p));
    // The first names left; the last are still the very same asks.
    const again = memo.take(policies[0]!);
    expect(again).not.toBe(asks[0]);
    const { keyOf, ...rest } = asks[0]!;
    expect(again).toMatchObject(rest);
    expect(again.keyOf('id')).toBe(keyOf('id'));
    expect(memo.take(policies.at(-1)!)).toBe(asks.at(-1));
  });
});
