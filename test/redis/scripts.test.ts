// The Lua scripts on a real Redis, with time pinned by the `nowUs` override so every edge is
// exact: GCRA against the token-bucket arithmetic, fixed and sliding window edges, the lease
// semaphore's expiry, renewal, idempotent release and fencing. (The key layout is tested in
// src/redis/keys.test.ts.)
import { describe, expect, it } from 'vitest';
import {
  fixedWindowScript,
  gcraScript,
  leaseMember,
  semAcquireScript,
  semReleaseScript,
  semRenewScript,
  slidingWindowScript,
  type RedisScript,
} from '../../src/redis/scripts.js';
import { scriptsForSuite, sharedRedisMissing } from './helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping Redis script tests: ${missing}`);

describe.skipIf(missing !== undefined)('Lua scripts (time pinned)', () => {
  const redis = scriptsForSuite('scripts');
  const key = (): string => redis.key();
  const run = async (s: RedisScript, keys: string[], args: (string | number)[]) =>
    (await redis.sc.run(s, keys, args)) as number[];
  const command = (args: string[]) => redis.c.command(args);
  const sec = 1_700_000_000_000_000; // a fixed µs epoch

  describe('GCRA', () => {
    // 10 per second (T = 100 ms), burst 5.
    const T = 100_000;
    const gcra = (k: string, need: number, at: number, want = need) =>
      run(gcraScript, [k], [T, 5, need, want, '', sec + at]);

    it('starts full, admits the burst, then refuses with the exact wait', async () => {
      const k = key();
      for (let i = 4; i >= 0; i--)
        expect(await gcra(k, 1, 0)).toEqual([1, i, -1, (5 - i) * 100, sec]);
      expect(await gcra(k, 1, 0)).toEqual([0, 0, 100, 500, sec]);
      expect(await gcra(k, 1, 99_999)).toEqual([0, 0, 1, 401, sec + 99_999]);
      expect((await gcra(k, 1, 100_000))[0]).toBe(1);
    });

    it('a refusal consumes nothing, and a cost above the burst can never succeed', async () => {
      const k = key();
      expect((await gcra(k, 3, 0))[0]).toBe(3);
      expect(await gcra(k, 3, 0)).toEqual([0, 2, 100, 300, sec]);
      expect((await gcra(k, 2, 0)).slice(0, 2)).toEqual([2, 0]);
      expect(await gcra(key(), 6, 0)).toEqual([0, 5, -1, 0, sec]);
    });

    it('grants up to `want` when `need` is there (leases)', async () => {
      const k = key();
      expect((await gcra(k, 1, 0, 3)).slice(0, 2)).toEqual([3, 2]);
      expect((await gcra(k, 1, 0, 3)).slice(0, 2)).toEqual([2, 0]);
      expect((await gcra(k, 1, 0, 3))[0]).toBe(0);
    });

    it('refills continuously and caps at the burst', async () => {
      const k = key();
      await gcra(k, 5, 0);
      expect((await gcra(k, 1, 250_000)).slice(0, 2)).toEqual([1, 1]);
      expect((await gcra(k, 1, 10_000_000)).slice(0, 2)).toEqual([1, 4]);
    });

    it('expires the key a second after the bucket is full again', async () => {
      const k = key();
      await gcra(k, 2, 0);
      const pttl = Number(await command(['PTTL', k]));
      expect(pttl).toBeGreaterThan(1_000);
      expect(pttl).toBeLessThanOrEqual(1_200);
    });

    it('a key whose TAT has passed is a full bucket, as a missing one', async () => {
      const k = key();
      await gcra(k, 5, 0);
      // Five seconds later on the script's clock (full again long before), the key still there.
      const later = await gcra(k, 1, 5_000_000);
      expect(later.slice(0, 2)).toEqual([1, 4]);
    });

    it('fractional emission intervals never admit more than the rate', async () => {
      const k = key();
      // 3 per second, burst 1: T = 333333.33 µs. Take at the exact retry each time.
      let at = 0;
      let admitted = 0;
      for (let i = 0; i < 30; i++) {
        const r = await run(gcraScript, [k], [1e6 / 3, 1, 1, 1, '', sec + at]);
        if (r[0] === 1) admitted++;
        else at += r[2]! * 1000;
      }
      // 30 calls cover at most 1 + 10 s × 3/s admissions.
      expect(admitted).toBeLessThanOrEqual(1 + Math.floor((at / 1e6) * 3));
      expect(admitted).toBeGreaterThanOrEqual(14);
    });
  });

  describe('fixed window', () => {
    const fw = (k: string, need: number, atMs: number, want = need) =>
      run(fixedWindowScript, [k], [1000, 3, need, want, '', sec + atMs * 1000]);

    it('admits exactly N per aligned window; refusals do not count', async () => {
      const k = key();
      expect(await fw(k, 1, 100)).toEqual([1, 2, -1, 900, sec / 1e6, sec + 100_000]);
      expect((await fw(k, 2, 200)).slice(0, 2)).toEqual([2, 0]);
      expect(await fw(k, 1, 999)).toEqual([0, 0, 1, 1, sec / 1e6, sec + 999_000]);
      expect((await fw(k, 3, 1000)).slice(0, 4)).toEqual([3, 0, -1, 1000]);
      expect(await fw(key(), 4, 0)).toEqual([0, 3, -1, 1000, sec / 1e6, sec]);
    });

    it('grants a partial batch up to what is left', async () => {
      const k = key();
      expect((await fw(k, 1, 0, 2)).slice(0, 2)).toEqual([2, 1]);
      expect((await fw(k, 1, 0, 2)).slice(0, 2)).toEqual([1, 0]);
    });
  });

  describe('sliding window', () => {
    const sw = (k: string, need: number, atMs: number) =>
      run(slidingWindowScript, [k], [1000, 10, need, need, '', sec + atMs * 1000]);

    it('weights the previous window by its overlap, in whole requests', async () => {
      const k = key();
      expect((await sw(k, 10, 500))[0]).toBe(10);
      // 1.25 s: the previous 10 overlap by 75 %, 7.5 of them: at least 7 could still be in
      // the trailing window, so 3 are left.
      expect((await sw(k, 2, 1250)).slice(0, 2)).toEqual([2, 1]);
      expect((await sw(k, 1, 1250)).slice(0, 2)).toEqual([1, 0]);
      const refused = await sw(k, 1, 1250);
      expect(refused[0]).toBe(0);
      // Needs the previous share at 7 -> 10 × (1 - x) <= 7  ->  x >= 0.3: 50 ms from now.
      expect(refused[2]).toBe(50);
      expect((await sw(k, 1, 1299))[0]).toBe(0);
      expect((await sw(k, 1, 1300))[0]).toBe(1);
    });

    it('forgets windows older than the previous one', async () => {
      const k = key();
      await sw(k, 10, 0);
      expect((await sw(k, 10, 2000))[0]).toBe(10);
    });
  });

  describe('lease semaphore', () => {
    const keys = (): [string, string] => {
      const k = key();
      return [`${k}:z`, `${k}:h`];
    };
    // A lease's id carries its weight, as the store writes it.
    const ids = new Map<string, string>();
    const id = (name: string, weight = 1): string => {
      if (!ids.has(name)) ids.set(name, leaseMember(weight, name));
      return ids.get(name)!;
    };
    const acquire = (ks: string[], name: string, weight: number, atMs: number) =>
      run(semAcquireScript, ks, [3, id(name, weight), weight, 1000, '', sec + atMs * 1000]);
    const release = (ks: string[], ...names: string[]) =>
      run(
        semReleaseScript,
        ks,
        names.map((n) => id(n)),
      );
    const sum = async (ks: string[]) => Number(await command(['HGET', ks[1]!, '#sum']));

    it('grants weight up to the limit, with increasing fences', async () => {
      ids.clear();
      const ks = keys();
      const a = await acquire(ks, 'a', 2, 0);
      expect(a.slice(0, 2)).toEqual([1, 1]);
      const b = await acquire(ks, 'b', 1, 1);
      expect(b[0]).toBe(1);
      expect(b[2]).toBeGreaterThan(a[2]!);
      const refused = await acquire(ks, 'c', 1, 2);
      expect(refused.slice(0, 3)).toEqual([0, 0, 0]);
      expect(refused[3]).toBe(998); // until a's lease expires
      expect(await release(ks, 'a')).toEqual([1]);
      expect(await release(ks, 'a')).toEqual([0]);
      expect(await sum(ks)).toBe(1);
      ids.delete('c');
      expect((await acquire(ks, 'c', 2, 3))[0]).toBe(1);
      expect(await sum(ks)).toBe(3);
    });

    it("a crashed holder's lease expires; renew extends but never resurrects", async () => {
      ids.clear();
      const ks = keys();
      await acquire(ks, 'a', 3, 0);
      expect(await run(semRenewScript, ks, [id('a'), 1000, sec + 900_000])).toBe(1);
      expect((await acquire(ks, 'b', 1, 1500))[0]).toBe(0); // renewed until 1.9 s
      expect((await acquire(ks, 'b', 1, 1901))[0]).toBe(1); // swept
      expect(await sum(ks)).toBe(1); // a's weight of 3 off, b's on
      expect(await run(semRenewScript, ks, [id('a'), 1000, sec + 1_902_000])).toBe(0);
      expect(await release(ks, 'a')).toEqual([0]);
      expect(await sum(ks)).toBe(1);
    });

    it('sweeps only when the weight does not fit, and then every expired lease it finds', async () => {
      ids.clear();
      const ks = keys();
      await acquire(ks, 'a', 1, 0);
      await acquire(ks, 'b', 1, 0);
      await acquire(ks, 'c', 1, 5000); // a and b expired, still counted: it fits anyway
      expect(Number(await command(['ZCARD', ks[0]]))).toBe(3);
      expect((await acquire(ks, 'd', 1, 5001))[0]).toBe(1);
      expect(Number(await command(['ZCARD', ks[0]]))).toBe(2); // a and b swept
      expect(await sum(ks)).toBe(2);
    });

    it('fences stay increasing after the state expires', async () => {
      ids.clear();
      const ks = keys();
      const first = await acquire(ks, 'a', 1, 0);
      await command(['DEL', ...ks]);
      const second = await acquire(ks, 'b', 1, 1);
      expect(second[2]).toBeGreaterThan(first[2]!);
    });

    it('releases several leases in one call, each answered on its own', async () => {
      ids.clear();
      const ks = keys();
      const other = keys();
      await acquire(ks, 'a', 2, 0);
      await acquire(other, 'b', 1, 0);
      const r = await run(semReleaseScript, [...ks, ...other, ...ks], [id('a'), id('b'), id('a')]);
      expect(r).toEqual([1, 1, 0]);
      expect((await acquire(ks, 'c', 3, 1))[0]).toBe(1); // a's weight came back
    });

    it('keeps both keys alive past the last lease, expiring them again about once a minute', async () => {
      ids.clear();
      const ks = keys();
      const exp = async () => Number(await command(['HGET', ks[1], '#exp']));
      await acquire(ks, 'a', 1, 0);
      expect(await exp()).toBe(Math.floor(sec / 1000) + 121_000);
      for (const k of ks) expect(Number(await command(['PTTL', k]))).toBeGreaterThan(120_000);
      await acquire(ks, 'b', 1, 30_000); // needs until 91 s: the expiry set is long enough
      expect(await exp()).toBe(Math.floor(sec / 1000) + 121_000);
      await acquire(ks, 'c', 1, 70_000); // needs until 131 s: expired again
      expect(await exp()).toBe(Math.floor(sec / 1000) + 191_000);
    });

    it('a zset emptied by releases and made again by an acquire expires with the hash', async () => {
      ids.clear();
      const ks = keys();
      await acquire(ks, 'a', 1, 0);
      await release(ks, 'a'); // the zset is empty: Redis deletes it
      expect(Number(await command(['EXISTS', ks[0]]))).toBe(0);
      await acquire(ks, 'b', 1, 10); // the expiry set is long enough: not set again
      const [z, h] = [await command(['PTTL', ks[0]]), await command(['PTTL', ks[1]])];
      expect(Number(z)).toBeGreaterThan(100_000);
      expect(Math.abs(Number(z) - Number(h))).toBeLessThan(1_000);
    });

    it('refuses a reused lease id', async () => {
      ids.clear();
      const ks = keys();
      await acquire(ks, 'a', 1, 0);
      await expect(acquire(ks, 'a', 1, 0)).rejects.toThrow(/SPILLWAY_DUPLICATE_LEASE/);
      // Also when the semaphore is full: a re-sent acquire is an error, not a refusal.
      const full = keys();
      await acquire(full, 'f', 3, 0);
      await expect(acquire(full, 'f', 3, 0)).rejects.toThrow(/SPILLWAY_DUPLICATE_LEASE/);
    });
  });

  describe('server-side expiry', () => {
    // Each take script with its own arguments, the expiry, then the pinned time.
    const takes: [string, RedisScript, (string | number)[], number][] = [
      ['gcra', gcraScript, [100_000, 5, 1, 1], 1],
      ['fixed window', fixedWindowScript, [1000, 3, 1, 1], 1],
      ['sliding window', slidingWindowScript, [1000, 3, 1, 1], 1],
      ['sem acquire', semAcquireScript, [3, 'lease', 1, 1000], 2],
    ];

    it.each(takes)('%s does nothing once Redis time is past the expiry', async (_, s, args, n) => {
      const ks = Array.from({ length: n }, key);
      expect(await run(s, ks, [...args, sec - 1, sec])).toEqual([-1, sec]);
      expect(Number(await command(['EXISTS', ...ks]))).toBe(0);
      // At the expiry itself it still runs, and replies with Redis's now last.
      const r = await run(s, ks, [...args, sec, sec]);
      expect(r[0]).toBe(1);
      expect(r.at(-1)).toBe(sec);
    });

    it('without an expiry, or on Redis TIME, a take runs and says what time it is', async () => {
      const k = key();
      const r = await run(gcraScript, [k], [100_000, 5, 1, 1, '']);
      expect(r[0]).toBe(1);
      expect(Math.abs(r.at(-1)! / 1000 - Date.now())).toBeLessThan(60_000);
      const late = await run(gcraScript, [k], [100_000, 5, 1, 1, r.at(-1)! - 1]);
      expect(late).toEqual([-1, expect.any(Number)]);
    });
  });
});
