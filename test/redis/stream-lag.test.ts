// redisStreamLag against the Redis at 127.0.0.1:6379, with each client flavour: XINFO GROUPS'
// pending and lag, the oldest unfinished entry's age on Redis's clock, and a lagGate fed by it.
// Every stream key is unique to the test and deleted afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lagGate } from '../../src/index.js';
import { redisStreamLag } from '../../src/redis/index.js';
import {
  cleanup,
  connect,
  flavours,
  sharedRedisMissing,
  uniquePrefix,
  type TestClient,
} from './helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping Redis Streams lag tests: ${missing}`);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing !== undefined).each(flavours)('redisStreamLag (%s)', (flavour) => {
  let c: TestClient;
  const prefix = uniquePrefix('streamlag');
  let n = 0;
  const key = (): string => `${prefix}:${n++}`;
  beforeAll(async () => {
    c = await connect(flavour);
  });
  afterAll(async () => {
    await cleanup(c, prefix);
    await c.close();
  });

  async function add(stream: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(String(await c.command(['XADD', stream, '*', 'n', String(i)])));
    }
    return ids;
  }

  it('counts no more undelivered entries than a trimmed stream still holds', async () => {
    // Redis 7.0's XINFO GROUPS goes on counting entries MAXLEN trimmed away: 11 added, 2 read,
    // all but the last trimmed, and its lag reads 9 with one entry left.
    const stream = key();
    await c.command(['XGROUP', 'CREATE', stream, 'g', '$', 'MKSTREAM']);
    await add(stream, 11);
    await c.command(['XREADGROUP', 'GROUP', 'g', 'w', 'COUNT', '2', 'STREAMS', stream, '>']);
    await c.command(['XTRIM', stream, 'MAXLEN', '1']);
    const left = Number(await c.command(['XLEN', stream]));
    expect(left).toBe(1);
    // The 2 delivered stay pending in the group though trimmed; at most 1 is undelivered.
    expect((await redisStreamLag({ client: c.client, stream, group: 'g' })()).messages).toBe(3);
  });

  it('is pending plus lag, and the age of the oldest entry not yet acknowledged', async () => {
    const stream = key();
    await c.command(['XGROUP', 'CREATE', stream, 'g', '$', 'MKSTREAM']);
    const read = redisStreamLag({ client: c.client, stream, group: 'g' });
    expect(await read()).toEqual({ messages: 0, oldestAgeMs: 0 });
    const ids = await add(stream, 10);
    await sleep(120);
    const before = await read();
    expect(before.messages).toBe(10);
    expect(before.oldestAgeMs).toBeGreaterThanOrEqual(110);
    // Deliver 4 (pending 4, lag 6), acknowledge the first 2.
    await c.command(['XREADGROUP', 'GROUP', 'g', 'w', 'COUNT', '4', 'STREAMS', stream, '>']);
    expect((await read()).messages).toBe(10);
    await c.command(['XACK', stream, 'g', ids[0]!, ids[1]!]);
    const after = await read();
    expect(after.messages).toBe(8);
    expect(after.oldestAgeMs).toBeGreaterThanOrEqual(110);
    await c.command(['XACK', stream, 'g', ids[2]!, ids[3]!]);
    expect((await read()).messages).toBe(6);
  });

  it('a missing stream or group is a failed read, so a gate goes stale by its policy', async () => {
    const stream = key();
    const read = redisStreamLag({ client: c.client, stream, group: 'nobody' });
    await expect(read()).rejects.toThrow();
    await add(stream, 1);
    await expect(read()).rejects.toThrow(/no consumer group nobody/);
    const gate = lagGate({ readLag: read, maxLag: 5, pollMs: 10, staleAfterMs: 50 });
    await sleep(60);
    gate.tryAdmit();
    await sleep(10);
    expect(gate.tryAdmit()).toMatchObject({ ok: false, reason: 'stale' });
  });

  it('feeds a lagGate that stops admitting at maxLag', async () => {
    const stream = key();
    await c.command(['XGROUP', 'CREATE', stream, 'g', '$', 'MKSTREAM']);
    const gate = lagGate({
      readLag: redisStreamLag({ client: c.client, stream, group: 'g' }),
      maxLag: 5,
      pollMs: 10,
    });
    await gate.admit({ maxWaitMs: 1_000 });
    let admitted = 1;
    await c.command(['XADD', stream, '*', 'n', '0']);
    for (let i = 0; i < 20; i++) {
      if (!gate.tryAdmit().ok) continue;
      admitted++;
      await c.command(['XADD', stream, '*', 'n', String(i)]);
    }
    expect(admitted).toBe(5);
    expect(gate.tryAdmit()).toMatchObject({ ok: false, reason: 'lag', signal: 'later' });
  });
});
