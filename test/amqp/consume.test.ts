// consumeWithPermits against a real RabbitMQ: needs RabbitMQ at 127.0.0.1:5672 (guest/guest).
// Every test declares its own queues (unique names) and deletes them; waits poll with bounded
// deadlines. Handlers take a few real milliseconds so that work overlaps; nothing races the
// broker on time except where a lower bound is the claim (a refused message is held ≥ its
// retryAfterMs), and lower bounds cannot flake on a slow machine.
import type { Channel, ChannelModel } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  consumeWithPermits,
  type AmqpMessage,
  type DeadLetterEvent,
  type PermitConsumer,
  type SettleEvent,
} from '../../src/amqp/index.js';
import { concurrencyLimit } from '../../src/core/concurrency-limit/concurrency-limit.js';
import { DependencyOverloadedError } from '../../src/core/errors/overloaded-error.js';
import { connect, deleteQueues, uniqueQueue, waitFor } from './helpers.js';

let connection: ChannelModel;
let setup: Channel;
const queues: string[] = [];
const consumers: PermitConsumer[] = [];

beforeAll(async () => {
  connection = await connect();
  setup = await connection.createChannel();
});
afterEach(async () => {
  for (const c of consumers.splice(0)) await c.stop();
  await deleteQueues(connection, queues.splice(0));
});
afterAll(async () => {
  await connection.close();
});

/** A work queue whose rejected messages go to a dead-letter queue of its own. */
async function workQueue(label: string): Promise<{ queue: string; dlq: string }> {
  const queue = uniqueQueue(label);
  const dlq = `${queue}-dlq`;
  queues.push(queue, dlq);
  await setup.assertQueue(dlq, { durable: false });
  await setup.assertQueue(queue, {
    durable: false,
    deadLetterExchange: '',
    deadLetterRoutingKey: dlq,
  });
  return { queue, dlq };
}

function publish(queue: string, count: number): void {
  for (let i = 0; i < count; i++) {
    setup.sendToQueue(queue, Buffer.from(String(i)), { messageId: String(i) });
  }
}

const idOf = (m: AmqpMessage): string => String(m.properties.messageId);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function messagesIn(queue: string): Promise<number> {
  return (await setup.checkQueue(queue)).messageCount;
}

/** Ids of the messages waiting in `queue`, taken off it (acked). */
async function drain(queue: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const m = await setup.get(queue, { noAck: true });
    if (m === false) return ids;
    ids.push(String(m.properties.messageId));
  }
}

describe('consumeWithPermits', () => {
  it('never runs more handlers than the limit, checked on every message', async () => {
    const { queue } = await workQueue('limit');
    publish(queue, 200);
    const channel = await connection.createChannel();
    let running = 0;
    let most = 0;
    let done = 0;
    // A failed expect inside a handler would only requeue the message: count, assert after.
    const over: number[] = [];
    const started: { consumer?: PermitConsumer } = {};
    const consumer = await consumeWithPermits({
      channel,
      queue,
      limit: 4,
      handler: async () => {
        running += 1;
        most = Math.max(most, running);
        if (running > 4 || (started.consumer?.active ?? 0) > 4) over.push(running);
        await pause(1 + (done % 3));
        running -= 1;
        done += 1;
      },
    });
    started.consumer = consumer;
    consumers.push(consumer);
    await waitFor('200 handled', () => done === 200);
    expect(over).toEqual([]);
    expect(most).toBe(4);
    expect(consumer.prefetch).toBe(4);
    await waitFor('queue empty', async () => (await messagesIn(queue)) === 0);
  });

  it('reports no refusal to a shared limit while deliveries wait for a free permit', async () => {
    const { queue } = await workQueue('quiet');
    const total = 60;
    publish(queue, total);
    // A limit shared with other work, whose refusals someone counts.
    const limit = concurrencyLimit({ limit: 2 });
    const refusals: string[] = [];
    limit.onReject((e) => refusals.push(e.reason));
    let done = 0;
    const consumer = await consumeWithPermits({
      channel: await connection.createChannel(),
      queue,
      limit,
      prefetch: 8,
      handler: async () => {
        await pause(2);
        done += 1;
      },
    });
    consumers.push(consumer);
    await waitFor('every message handled', () => done === total);
    // Deliveries found the limit full again and again, and waited: nothing was refused.
    expect(refusals).toEqual([]);
    const held = [limit.tryAcquire(), limit.tryAcquire()];
    expect(limit.tryAcquire().ok).toBe(false);
    expect(refusals).toEqual(['queue-full']);
    for (const r of held) if (r.ok) r.permit.release();
  });

  it('loses nothing across a restart: every message acked exactly once or dead-lettered with a reason', async () => {
    const { queue, dlq } = await workQueue('restart');
    const total = 300;
    publish(queue, total);
    const acked = new Map<string, number>();
    const deadLettered = new Map<string, DeadLetterEvent['reason']>();
    const poison = (id: string): boolean => Number(id) % 17 === 0;
    const start = async (): Promise<PermitConsumer> => {
      const consumer = await consumeWithPermits({
        channel: await connection.createChannel(),
        queue,
        limit: 5,
        handler: async (m) => {
          await pause(1);
          if (poison(idOf(m))) throw new Error('poison');
        },
      });
      consumer.onSettle((e: SettleEvent) => {
        if (e.settlement.action === 'ack' && e.sent) {
          acked.set(idOf(e.message), (acked.get(idOf(e.message)) ?? 0) + 1);
        }
      });
      consumer.onDeadLetter((e) => deadLettered.set(idOf(e.message), e.reason));
      return consumer;
    };
    const first = await start();
    await waitFor('a third acked', () => acked.size >= total / 3);
    await first.stop(); // mid-batch: permits held, deliveries waiting
    expect(acked.size).toBeLessThan(total);
    const second = await start();
    consumers.push(second);
    await waitFor('all settled', () => acked.size + deadLettered.size === total, 20_000);
    await waitFor(
      'dead letters arrived',
      async () => (await messagesIn(dlq)) === deadLettered.size,
    );
    expect([...acked.values()].every((n) => n === 1)).toBe(true);
    const dead = await drain(dlq);
    expect(dead.sort()).toEqual([...deadLettered.keys()].sort());
    for (let i = 0; i < total; i++) {
      const id = String(i);
      if (poison(id)) expect(deadLettered.get(id)).toBe('failed');
      else expect(acked.get(id)).toBe(1);
    }
    expect(await messagesIn(queue)).toBe(0);
  });

  it('frees the permit of a handler that throws, and redelivers its message once', async () => {
    const { queue } = await workQueue('throws');
    publish(queue, 3);
    const seen: string[] = [];
    const consumer = await consumeWithPermits({
      channel: await connection.createChannel(),
      queue,
      limit: 1,
      handler: (m) => {
        seen.push(`${idOf(m)}${m.fields.redelivered ? 'r' : ''}`);
        if (idOf(m) === '0' && !m.fields.redelivered) throw new Error('once');
      },
    });
    consumers.push(consumer);
    await waitFor('all three handled', () => seen.length === 4);
    // Requeued at the head: RabbitMQ redelivers it before the messages behind it.
    expect(seen).toEqual(['0', '0r', '1', '2']);
    await waitFor('permit free', () => consumer.active === 0);
  });

  it('frees the permit of a handler that never settles at the deadline, and dead-letters the message', async () => {
    const { queue, dlq } = await workQueue('stuck');
    publish(queue, 2);
    const dead: DeadLetterEvent[] = [];
    const handled: string[] = [];
    let aborted = false;
    const consumer = await consumeWithPermits({
      channel: await connection.createChannel(),
      queue,
      limit: 1,
      maxAgeMs: 300,
      settleGraceMs: 100,
      handler: (m, { signal }) => {
        handled.push(idOf(m));
        if (idOf(m) === '0') {
          signal.addEventListener('abort', () => (aborted = true));
          return new Promise(() => {}); // ignores its signal: never settles
        }
        return undefined;
      },
    });
    consumers.push(consumer);
    consumer.onDeadLetter((e) => dead.push(e));
    await waitFor('the second message handled', () => handled.includes('1'));
    expect(aborted).toBe(true);
    expect(dead.map((e) => [idOf(e.message), e.reason])).toEqual([['0', 'expired']]);
    await waitFor('dead-lettered', async () => (await messagesIn(dlq)) === 1);
    await waitFor('permit free', () => consumer.active === 0);
  });

  it('holds a message refused downstream for its retryAfterMs before requeueing it', async () => {
    const { queue } = await workQueue('later');
    publish(queue, 1);
    const deliveredAt: number[] = [];
    const consumer = await consumeWithPermits({
      channel: await connection.createChannel(),
      queue,
      limit: 1,
      handler: () => {
        deliveredAt.push(performance.now());
        if (deliveredAt.length === 1) {
          throw new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 200 });
        }
      },
    });
    consumers.push(consumer);
    await waitFor('redelivered and handled', () => deliveredAt.length === 2);
    expect(deliveredAt[1]! - deliveredAt[0]!).toBeGreaterThanOrEqual(199);
    await waitFor('acked', async () => (await messagesIn(queue)) === 0 && consumer.active === 0);
  });

  it('dead-letters a message already past its age without running the handler', async () => {
    const { queue, dlq } = await workQueue('old');
    setup.sendToQueue(queue, Buffer.from('old'), {
      messageId: 'old',
      timestamp: Math.floor(Date.now() / 1000) - 60, // AMQP seconds: a minute old
    });
    setup.sendToQueue(queue, Buffer.from('new'), { messageId: 'new', timestamp: Date.now() });
    const handled: string[] = [];
    const consumer = await consumeWithPermits({
      channel: await connection.createChannel(),
      queue,
      limit: 2,
      maxAgeMs: 10_000,
      handler: (m) => void handled.push(idOf(m)),
    });
    consumers.push(consumer);
    await waitFor('dead-lettered', async () => (await messagesIn(dlq)) === 1);
    await waitFor('the fresh one handled', () => handled.length === 1);
    expect(handled).toEqual(['new']);
  });
});
