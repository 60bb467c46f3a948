// Needs: Redis on 127.0.0.1:6379.
// The penalty box shared through Redis, as two replicas (two stores on two connections, one
// box name): violations seen by either count together, a client escalated on one is refused
// on the other once it has read the feed, suspensions and lifts reach every replica, and a
// replica started later reads the whole box. Waits are long (a minute) so nothing here
// depends on how fast the machine is; each test has a prefix of its own and removes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PenaltyStepEvent } from '../../src/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { redisPenaltyBox, redisStore, type RedisPenaltyBox } from '../../src/redis/index.js';
import {
  cleanup,
  connect,
  eventually,
  mainFlavours,
  sharedRedisMissing,
  uniquePrefix,
  type TestClient,
} from './helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping shared penalty box tests: ${missing}`);

describe.skipIf(missing !== undefined).each(mainFlavours)('redisPenaltyBox over %s', (flavour) => {
  let a: TestClient;
  let b: TestClient;
  const prefix = uniquePrefix(`pbox-${flavour}`);
  const boxes: RedisPenaltyBox[] = [];
  let n = 0;

  beforeAll(async () => {
    a = await connect(flavour);
    b = await connect(flavour);
  });
  afterAll(async () => {
    for (const box of boxes) box.close();
    await cleanup(a, prefix);
    await Promise.all([a.close(), b.close()]);
  });

  /** Two replicas of one box: threshold 3 in a minute, a minute's wait, then a block. */
  const replicas = async (more: Partial<Parameters<typeof redisPenaltyBox>[0]> = {}) => {
    const name = `box${n++}`;
    const make = (c: TestClient) => {
      const store = redisStore({ client: c.client, prefix, timeoutMs: 2_000 });
      const box = redisPenaltyBox({
        store,
        name,
        threshold: 3,
        windowMs: 60_000,
        graceMs: 0,
        steps: [{ waitMs: 60_000 }, { waitMs: 120_000, block: true }],
        syncMs: 600_000, // read by hand in these tests
        ...more,
      });
      boxes.push(box);
      return box;
    };
    const both = [make(a), make(b)] as const;
    // Each reads the box once at start: wait for it, so no read is left in flight.
    await Promise.all(both.map((box) => box.sync()));
    return both;
  };

  /** A client ignoring Retry-After on `box`: refused by its quota, and back at once. */
  const ignore = (box: RedisPenaltyBox, key: string) => {
    const v = box.check(key, 'req');
    if (v === undefined) box.refused(key, 60_000);
    return v;
  };

  it('a client escalated on one replica is refused on the other', async () => {
    const [one, two] = await replicas();
    const moved = new Promise<PenaltyStepEvent>((resolve) => one.onStepChange(resolve));
    ignore(one, 'greedy'); // refused by its quota: must wait a minute
    for (let i = 0; i < 3; i++) ignore(one, 'greedy'); // three violations
    expect(await moved).toMatchObject({ key: 'greedy', step: 1, by: 'violations', cause: 'req' });
    expect(one.check('greedy')?.reason).toBe('penalty');
    expect(two.check('greedy')).toBeUndefined(); // not read yet
    expect(await two.sync()).toBe(true);
    const v = two.check('greedy');
    expect(v).toMatchObject({ reason: 'penalty', step: 1 });
    expect(v!.retryAfterMs).toBeGreaterThan(50_000);
    expect(v!.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(two.check('polite')).toBeUndefined();
  });

  it('a violation on a replica that has not read the feed yet learns the step there', async () => {
    const [one, two] = await replicas();
    const moved = new Promise<void>((resolve) => one.onStepChange(() => resolve()));
    ignore(one, 'x');
    for (let i = 0; i < 3; i++) ignore(one, 'x');
    await moved;
    ignore(two, 'x'); // refused by two's own quota: told to wait a minute there too
    const learned = new Promise<PenaltyStepEvent>((resolve) => two.onStepChange(resolve));
    expect(two.check('x')).toBeUndefined(); // back at once: a violation, sent to Redis
    expect(await learned).toMatchObject({ step: 1, previous: 0, by: 'shared' });
    const v = two.check('x');
    expect(v?.reason).toBe('penalty');
    expect(v!.retryAfterMs).toBeGreaterThan(50_000);
  });

  it('violations seen by either replica count together', async () => {
    const [one, two] = await replicas();
    ignore(one, 'c');
    ignore(two, 'c');
    const moved = new Promise<string>((resolve) => {
      one.onStepChange(() => resolve('one'));
      two.onStepChange(() => resolve('two'));
    });
    ignore(one, 'c'); // violation 1 (on one)
    ignore(two, 'c'); // violation 2 (on two)
    ignore(two, 'c'); // violation 3: the threshold, across both
    // Whichever replica's call lands last sees the third and moves the client up.
    expect(['one', 'two']).toContain(await moved);
    await Promise.all([one.sync(), two.sync()]);
    expect(one.check('c')?.reason).toBe('penalty');
    expect(two.check('c')?.reason).toBe('penalty');
  });

  it('keeps an active client in its view, however many others it meets (maxKeys)', async () => {
    const [one] = await replicas({ maxKeys: 10 });
    const moved = new Promise<void>((resolve) => one.onStepChange(() => resolve()));
    ignore(one, 'greedy');
    for (let i = 0; i < 3; i++) ignore(one, 'greedy');
    await moved;
    for (let i = 0; i < 100; i++) {
      one.refused(`other-${i}`, 60_000); // each a view of its own
      if (i % 5 === 0) expect(one.check('greedy'), `after ${i} others`).toBeDefined();
    }
    expect(one.size).toBe(10);
  });

  it('a lift forgives: what the client was told to wait for no longer counts', async () => {
    const [one, two] = await replicas();
    const moves: PenaltyStepEvent[] = [];
    one.onStepChange((e) => moves.push(e));
    const moved = new Promise<void>((resolve) => one.onStepChange(() => resolve()));
    ignore(one, 'k');
    for (let i = 0; i < 3; i++) ignore(one, 'k');
    await moved;
    await two.lift('k');
    await one.sync();
    expect(moves.map((e) => [e.step, e.by])).toEqual([
      [1, 'violations'],
      [0, 'shared'],
    ]);
    // Back at once, three times: not violations any more (its waits went with the lift).
    for (let i = 0; i < 3; i++) expect(one.check('k')).toBeUndefined();
    // Had they been violations: one call for the first, one for the other two once it is
    // back. Each read of the feed goes after the calls made before it on the connection.
    await one.sync();
    await one.sync();
    expect(moves).toHaveLength(2);
  });

  it('a suspension on one replica reaches the other, and so does its lift', async () => {
    const [one, two] = await replicas();
    await one.suspend('tenant-9');
    expect(one.check('tenant-9')?.reason).toBe('suspended');
    await two.sync();
    expect(two.check('tenant-9')).toEqual({
      reason: 'suspended',
      step: 0,
      retryAfterMs: undefined,
      closeConnection: false,
    });
    await two.lift('tenant-9');
    expect(two.check('tenant-9')).toBeUndefined();
    expect(one.check('tenant-9')?.reason).toBe('suspended');
    await one.sync();
    expect(one.check('tenant-9')).toBeUndefined();
  });

  it('a replica started later reads the whole box; a fresh box name shares nothing', async () => {
    const [one] = await replicas({ name: 'late-box' });
    await one.suspend('s1');
    ignore(one, 'g');
    for (let i = 0; i < 3; i++) ignore(one, 'g');
    await eventually('g escalates', () => one.check('g')?.reason === 'penalty');
    const store = redisStore({ client: b.client, prefix, timeoutMs: 2_000 });
    const late = redisPenaltyBox({ store, name: 'late-box', syncMs: 600_000 });
    const other = redisPenaltyBox({ store, name: 'other-box', syncMs: 600_000 });
    boxes.push(late, other);
    await Promise.all([late.sync(), other.sync()]);
    expect(late.check('s1')?.reason).toBe('suspended');
    expect(late.check('g')?.reason).toBe('penalty');
    expect(other.check('s1')).toBeUndefined();
  });

  it('lifts on metrics: a block held while this replica reads unhealthy', async () => {
    // Redis keeps the state on its own clock; this replica's view and readings run on a
    // virtual one, so the block's end and the readings are exact.
    const clock = createVirtualClock();
    let load = 5;
    const store = redisStore({ client: a.client, prefix, timeoutMs: 2_000, clock });
    const box = redisPenaltyBox({
      store,
      name: `box${n++}`,
      threshold: 1,
      graceMs: 0,
      steps: [{ waitMs: 1_000, block: true }],
      liftWhen: { load: () => load, healthyAt: 0, samples: 2, sampleMs: 100, spreadMs: 0 },
      syncMs: 600_000,
    });
    boxes.push(box);
    await box.sync();
    await clock.advance(200); // two readings over 0: unhealthy
    const moved = new Promise<PenaltyStepEvent>((resolve) => box.onStepChange(resolve));
    box.refused('c', 60_000);
    expect(box.check('c')).toBeUndefined(); // back at once: escalated by Redis
    expect(await moved).toMatchObject({ step: 1, by: 'violations' });
    // (Not asked again during the block: with a threshold of 1 that would start it again.)
    await clock.advance(1_000); // the block's wait is over, but the replica is not healthy
    expect(box.check('c')).toMatchObject({ reason: 'blocked', retryAfterMs: 200 });
    load = 0;
    await clock.advance(200); // two healthy readings
    expect(box.check('c')).toBeUndefined();
  });

  it('validates its options by name', () => {
    const store = redisStore({ client: a.client, prefix });
    expect(() => redisPenaltyBox({ store: {} as never })).toThrow(/`store`/);
    expect(() => redisPenaltyBox({ store, syncMs: 0 })).toThrow(/`syncMs`/);
    expect(() => redisPenaltyBox({ store, name: '' })).toThrow(/`name`/);
    expect(() => redisPenaltyBox({ store, threshold: 0 })).toThrow(/`threshold`/);
  });
});
