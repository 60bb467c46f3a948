// Needs: Redis on 127.0.0.1:6379.
// The shared penalty box's scripts with time pinned (the `nowUs` override): violations counted
// across calls and escalating on the threshold, lifting by quiet time (and none while the
// caller reads unhealthy), suspension and lift as feed entries, and the sweep that turns an
// expired state into a tombstone and forgets old tombstones (marking them swept).
import { describe, expect, it } from 'vitest';
import {
  penaltyFeedScript,
  penaltyLiftScript,
  penaltySuspendScript,
  penaltyViolateScript,
} from '../../src/redis/penalty-scripts.js';
import type { RedisScript } from '../../src/redis/redis-script.js';
import { scriptsForSuite, sharedRedisMissing } from './helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping penalty script tests: ${missing}`);

describe.skipIf(missing !== undefined)('penalty box scripts (time pinned)', () => {
  const redis = scriptsForSuite('pbscripts');
  const t0 = 1_700_000_000_000; // ms
  const us = (ms: number) => (t0 + ms) * 1_000;
  const box = () => {
    const tag = redis.key();
    const keys = ['s', 'v', 'f', 'x', 'm'].map((k) => `${tag}:pb:${k}`);
    // Take scripts get an empty expiry before the pinned time; the feed read only the time.
    const run = async (s: RedisScript, args: (string | number)[], atMs: number) => {
      const time: (string | number)[] = s.expires ? ['', us(atMs)] : [us(atMs)];
      return (await redis.sc.run(s, keys, [...args, ...time])) as (number | string)[];
    };
    // threshold 3 in 1 s; steps: 2 s wait, 10 s block, suspension; lift after 5 s quiet
    const violate = (id: string, n: number, atMs: number, healthyFor = 1e15) =>
      run(
        penaltyViolateScript,
        [id, n, 3, 1_000, 5_000, healthyFor, 60_000, 86_400_000, 30_000, '2000,10000,-1'],
        atMs,
      );
    const feed = (since: number, atMs: number) =>
      run(penaltyFeedScript, [since, 100, 30_000], atMs);
    const suspend = (id: string, atMs: number) =>
      run(penaltySuspendScript, [id, 86_400_000, 30_000], atMs);
    const lift = (id: string, atMs: number) => run(penaltyLiftScript, [id, 30_000], atMs);
    return { violate, feed, suspend, lift };
  };

  it('counts violations across calls and moves up one step on the threshold', async () => {
    const b = box();
    // Reply: step, ms left, suspended, moved, now µs.
    expect(await b.violate('c', 2, 0)).toEqual([0, 0, 0, 0, us(0)]);
    expect(await b.violate('c', 1, 100)).toEqual([1, 2_000, 0, 1, us(100)]);
    // The ring was emptied: two more do nothing, a third within the second moves it again.
    expect((await b.violate('c', 2, 500)).slice(0, 4)).toEqual([1, 1_600, 0, 0]);
    expect((await b.violate('c', 1, 600)).slice(0, 4)).toEqual([2, 10_000, 0, 1]);
    expect((await b.violate('c', 3, 700)).slice(0, 4)).toEqual([3, 0, 1, 1]);
    // Suspended: nothing more is counted.
    expect((await b.violate('c', 3, 800)).slice(0, 4)).toEqual([3, 0, 1, 0]);
    // Violations outside the window do not add up.
    for (const at of [0, 1_001, 2_002]) expect((await b.violate('d', 1, at))[0]).toBe(0);
  });

  it('lifts by quiet time after the wait, only while the caller reads healthy', async () => {
    for (const [healthyFor, after] of [
      // 5 s of quiet after the 10 s wait: one step down (to 1), then three violations: 2.
      [1e15, [2, 10_000, 0, 1]],
      // Unhealthy: no step lifted, so the three violations take it from 2 to its suspension.
      [-1, [3, 0, 1, 1]],
      // Healthy for only the last 4 s: not yet 5 s of quiet that count.
      [4_000, [3, 0, 1, 1]],
    ] as const) {
      const b = box();
      await b.violate('c', 3, 0); // step 1 until 2 s
      await b.violate('c', 3, 100); // step 2 until 10.1 s
      expect((await b.violate('c', 3, 15_200, healthyFor)).slice(0, 4)).toEqual(after);
    }
    const e = box();
    await e.violate('c', 3, 0);
    await e.violate('c', 3, 100);
    // Two quiet periods after the wait: out of the box before this one violation counts.
    expect((await e.violate('c', 1, 20_200)).slice(0, 4)).toEqual([0, 0, 0, 0]);
  });

  it('writes moves, suspensions and lifts to the feed; a lift is a tombstone', async () => {
    const b = box();
    await b.violate('a', 3, 0);
    await b.suspend('b', 10);
    // Reply: now ms, last seq, swept, epoch (the first read's now, µs), then client, seq,
    // step, left, quiet, suspended.
    const epoch = us(20);
    expect(await b.feed(0, 20)).toEqual([
      t0 + 20,
      2,
      0,
      epoch,
      'a',
      1,
      1,
      1_980,
      20,
      0,
      'b',
      2,
      0,
      0,
      10,
      1,
    ]);
    await b.lift('a', 30);
    expect(await b.feed(2, 40)).toEqual([t0 + 40, 3, 0, epoch, 'a', 3, -1, 0, 0, 0]);
    expect(await b.feed(3, 40)).toEqual([t0 + 40, 3, 0, epoch]);
  });

  it('turns an expired state into a tombstone, and forgets old tombstones as swept', async () => {
    const b = box();
    await b.violate('a', 3, 0); // step 1: gone after 2 s + 5 s + 60 s
    expect((await b.feed(0, 66_999)).length).toBe(10);
    const epoch = us(66_999);
    const expired = await b.feed(1, 67_001);
    expect(expired).toEqual([t0 + 67_001, 2, 0, epoch, 'a', 2, -1, 0, 0, 0]);
    // The tombstone stays 30 s, then is swept: a replica that never read it must start over.
    expect(await b.feed(0, 97_002)).toEqual([t0 + 97_002, 2, 2, epoch]);
  });
});
