// spillway/nats against a real server: needs NATS with JetStream at 127.0.0.1:4222 (`.ci/run`
// starts it). Each test uses its own memory stream and consumer (unique names) and deletes them.
import type { Consumer, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import { BacklogFullError, RateLimitedError, concurrencyLimit, lagGate } from '../../src/index.js';
import {
  backlogFullFrom,
  consumeWithPermits,
  jetStreamLag,
  jetStreamPublisher,
  type JetStreamManagerLike,
  type PullConsumerLike,
} from '../../src/nats/index.js';
import { eventually, fixture, sleep, type Fixture } from './helpers.js';

// The real client's objects fit the shapes spillway/nats asks for.
const _jsm: (m: JetStreamManager) => JetStreamManagerLike = (m) => m;
const _consumer: (c: Consumer) => PullConsumerLike<JsMsg> = (c) => c;
void _jsm;
void _consumer;

const open: Fixture[] = [];
async function make(...args: Parameters<typeof fixture>): Promise<Fixture> {
  const f = await fixture(...args);
  open.push(f);
  return f;
}
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
});

async function publishMany(f: Fixture, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await f.js.publish(f.subject, String(i));
}

describe('jetStreamLag', () => {
  it('reads pending plus unacknowledged, and the age of the oldest unfinished message', async () => {
    const f = await make('lag');
    const read = jetStreamLag({ jsm: f.jsm, stream: f.stream, consumer: f.durable });
    expect(await read()).toEqual({ messages: 0, oldestAgeMs: 0 });
    await publishMany(f, 10);
    const batch = await (await f.consumer()).fetch({ max_messages: 3, expires: 1_000 });
    const held: JsMsg[] = [];
    for await (const m of batch) held.push(m);
    expect(held).toHaveLength(3);
    await sleep(150);
    const r = await read();
    expect(r.messages).toBe(10);
    expect(r.oldestAgeMs).toBeGreaterThanOrEqual(140);
    expect(r.oldestAgeMs).toBeLessThan(5_000);
    for (const m of held) await m.ackAck();
    expect((await read()).messages).toBe(7);
  });

  it('a consumer that is not there is a failed read, and the gate follows onStale', async () => {
    const f = await make('lagmissing');
    const gate = lagGate({
      readLag: jetStreamLag({ jsm: f.jsm, stream: f.stream, consumer: 'nobody' }),
      maxLag: 10,
      pollMs: 20,
      staleAfterMs: 100,
      onStale: 'closed',
    });
    await eventually('stale', () => {
      const r = gate.tryAdmit();
      return !r.ok && r.reason === 'stale';
    });
    expect(gate.lastError).toBeInstanceOf(Error);
  });
});

describe('lagGate over jetStreamLag', () => {
  it('holds the lag within maxLag plus what was in flight (one awaited publish)', async () => {
    const f = await make('gate');
    const maxLag = 40;
    const gate = lagGate({
      readLag: jetStreamLag({ jsm: f.jsm, stream: f.stream, consumer: f.durable }),
      maxLag,
      pollMs: 25,
      staleAfterMs: 1_000,
    });
    // A consumer at about 2 × 1 / 10 ms = 200/s; the producer offers as fast as it can.
    const consumer = consumeWithPermits({
      consumer: await f.consumer(),
      limit: 2,
      expiresMs: 1_000,
      handler: () => sleep(10),
    });
    const publisher = jetStreamPublisher({ js: f.js, gate });
    let observed = 0;
    let published = 0;
    let refused = 0;
    // At least 1.5 s, and on a machine too busy to publish past maxLag by then, on until it has
    // (at most 10 s): the bound is what is judged, not how fast the machine is.
    const start = Date.now();
    const going = () =>
      Date.now() < start + 1_500 || (published <= maxLag && Date.now() < start + 10_000);
    let publishing = true;
    const watch = (async () => {
      while (publishing) {
        const info = await f.jsm.consumers.info(f.stream, f.durable);
        observed = Math.max(observed, info.num_pending + info.num_ack_pending);
        await sleep(5);
      }
    })();
    while (going()) {
      try {
        await publisher.publish(f.subject, 'x');
        published++;
      } catch (e) {
        expect(e).toBeInstanceOf(BacklogFullError);
        refused++;
        await sleep(Math.min((e as BacklogFullError).retryAfterMs ?? 5, 50));
      }
    }
    publishing = false;
    await watch;
    await consumer.stop();
    expect(published).toBeGreaterThan(maxLag);
    expect(refused).toBeGreaterThan(0);
    expect(observed).toBeGreaterThan(maxLag / 2);
    expect(observed).toBeLessThanOrEqual(maxLag + 1);
  });
});

describe('consumeWithPermits', () => {
  it('never runs more handlers than permits, and loses nothing across a restart', async () => {
    const f = await make('permits', {}, 1_000);
    const total = 300;
    const poison = new Set([7, 150]);
    await publishMany(f, total);
    const limit = 3;
    let running = 0;
    let most = 0;
    const acked: number[] = [];
    const termed = new Map<number, string>();
    const handler = async (m: JsMsg): Promise<void> => {
      running++;
      most = Math.max(most, running);
      expect(running).toBeLessThanOrEqual(limit);
      try {
        await sleep(Math.random() * 3);
        if (poison.has(Number(m.string()))) throw new Error('poison');
      } finally {
        running--;
      }
    };
    const start = async () => {
      const c = consumeWithPermits({
        consumer: await f.consumer(),
        limit,
        batch: 2,
        expiresMs: 1_000,
        retryDelayMs: 10,
        maxDeliveries: 2,
        handler,
      });
      c.onSettle(({ message, settlement }) => {
        const seq = message.info.streamSequence;
        if (settlement.action === 'ack') acked.push(seq);
        if (settlement.action === 'term') termed.set(seq, settlement.reason);
      });
      return c;
    };
    const first = await start();
    await eventually('a first share acked', () => acked.length >= 100);
    await first.stop();
    expect(first.inFlight).toBe(0);
    const second = await start();
    await eventually('every message settled', () => acked.length + termed.size === total, 15_000);
    await second.stop();
    expect(new Set(acked).size).toBe(acked.length);
    expect([...termed.values()]).toEqual(['failed', 'failed']);
    for (const seq of termed.keys()) expect(acked).not.toContain(seq);
    expect(most).toBeLessThanOrEqual(limit);
    // Acks and terms are sent without waiting for the server: it catches up shortly.
    await eventually('the server has nothing outstanding', async () => {
      const info = await f.jsm.consumers.info(f.stream, f.durable);
      return info.num_pending + info.num_ack_pending === 0;
    });
  });

  it('reports no refusal to a shared limit while it waits for a free permit', async () => {
    const f = await make('quiet', {}, 1_000);
    const total = 60;
    await publishMany(f, total);
    // A limit shared with other work, whose refusals someone counts.
    const limit = concurrencyLimit({ limit: 2 });
    const refusals: string[] = [];
    limit.onReject((e) => refusals.push(e.reason));
    let handled = 0;
    const c = consumeWithPermits({
      consumer: await f.consumer(),
      limit,
      batch: 2,
      expiresMs: 1_000,
      handler: async () => {
        await sleep(2);
        handled++;
      },
    });
    await eventually('every message handled', () => handled === total);
    await c.stop();
    // The consumer found the limit full again and again, and waited: nothing was refused.
    expect(refusals).toEqual([]);
    const held = [limit.tryAcquire(), limit.tryAcquire()];
    expect(limit.tryAcquire().ok).toBe(false);
    expect(refusals).toEqual(['queue-full']);
    for (const r of held) if (r.ok) r.permit.release();
  });

  it('naks a message refused downstream with the refusal as its delay', async () => {
    const f = await make('nak');
    await publishMany(f, 1);
    const seen: { at: number; count: number }[] = [];
    const c = consumeWithPermits({
      consumer: await f.consumer(),
      limit: 1,
      expiresMs: 1_000,
      handler: (m) => {
        seen.push({ at: Date.now(), count: m.info.deliveryCount });
        if (m.info.deliveryCount === 1) throw new RateLimitedError(400);
      },
    });
    await eventually('redelivered and acked', () => c.counts.acked === 1);
    await c.stop();
    expect(seen.map((s) => s.count)).toEqual([1, 2]);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(380);
    expect(c.counts.naked).toBe(1);
  });

  it('terminates messages older than maxAgeMs without running the handler', async () => {
    const f = await make('age');
    await publishMany(f, 3);
    await sleep(250);
    let calls = 0;
    const c = consumeWithPermits({
      consumer: await f.consumer(),
      limit: 2,
      maxAgeMs: 200,
      expiresMs: 1_000,
      handler: () => void calls++,
    });
    await eventually('all termed', () => c.counts.termed === 3);
    await c.stop();
    expect(calls).toBe(0);
  });

  it('frees the permit of a handler that never settles, at its deadline', async () => {
    const f = await make('hang', {}, 1_000);
    await publishMany(f, 1);
    const signals: AbortSignal[] = [];
    const c = consumeWithPermits({
      consumer: await f.consumer(),
      limit: 1,
      expiresMs: 1_000,
      maxDeliveries: 1,
      handler: (_m, { signal }) => {
        signals.push(signal);
        return new Promise(() => undefined);
      },
    });
    await eventually('termed after its deadline', () => c.counts.termed === 1, 5_000);
    expect(signals[0]!.aborted).toBe(true);
    expect(c.inFlight).toBe(0);
    await c.stop();
  });
});

describe('jetStreamPublisher', () => {
  it('turns a full discard-new stream into a typed later error', async () => {
    const f = await make('full', { max_msgs: 3, discard: 'new' as never });
    const publisher = jetStreamPublisher({ js: f.js });
    for (let i = 0; i < 3; i++) await publisher.publish(f.subject, 'x');
    const e: unknown = await publisher.publish(f.subject, 'x').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BacklogFullError);
    expect(e).toMatchObject({ by: 'broker', signal: 'later', detail: 'maximum messages exceeded' });
    expect((e as Error).cause).toMatchObject({ code: 10077 });
  });

  it('a full stream by bytes too; other failures pass through untouched', async () => {
    const f = await make('bytes', { max_bytes: 300, discard: 'new' as never });
    let refusal: unknown;
    for (let i = 0; i < 20 && refusal === undefined; i++) {
      await f.js.publish(f.subject, 'y'.repeat(50)).catch((e: unknown) => (refusal = e));
    }
    expect(backlogFullFrom(refusal)).toMatchObject({ detail: 'maximum bytes exceeded' });
    const other = await f.js.publish('spw_nowhere.x', 'z').catch((e: unknown) => e);
    expect(backlogFullFrom(other)).toBeUndefined();
  });
});
