// The producer side against a real RabbitMQ: needs RabbitMQ at 127.0.0.1:5672 (guest/guest).
// A bounded queue's nack becomes a typed `later` error; queueDepth reads a queue's backlog; a
// lagGate fed by queueDepth holds a producer's backlog within maxLag + what is in flight.
// Each test declares its own queues (unique names) and deletes them; waits poll with deadlines.
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BacklogFullError,
  confirmPublisher,
  consumeWithPermits,
  queueDepth,
  type PermitConsumer,
} from '../../src/amqp/index.js';
import { lagGate } from '../../src/core/lag-gate/lag-gate.js';
import { connect, deleteQueues, uniqueQueue, waitFor } from './helpers.js';

let connection: ChannelModel;
let setup: Channel;
let confirms: ConfirmChannel;
const queues: string[] = [];
const consumers: PermitConsumer[] = [];

beforeAll(async () => {
  connection = await connect();
  setup = await connection.createChannel();
  confirms = await connection.createConfirmChannel();
});
afterEach(async () => {
  for (const c of consumers.splice(0)) await c.stop();
  await deleteQueues(connection, queues.splice(0));
});
afterAll(async () => {
  await connection.close();
});

async function declare(label: string, args: Record<string, unknown> = {}): Promise<string> {
  const queue = uniqueQueue(label);
  queues.push(queue);
  await setup.assertQueue(queue, { durable: false, arguments: args });
  return queue;
}

const body = Buffer.from('work');

describe('confirmPublisher against a bounded queue', () => {
  it('turns the nack of a full reject-publish queue into BacklogFullError (later)', async () => {
    const queue = await declare('full', { 'x-max-length': 3, 'x-overflow': 'reject-publish' });
    const publisher = confirmPublisher({ channel: confirms, connection, retryAfterMs: 250 });
    const results = await Promise.allSettled(
      [1, 2, 3, 4, 5].map(() => publisher.send(queue, body)),
    );
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
    ]);
    for (const r of results.slice(3)) {
      const error = (r as PromiseRejectedResult).reason as BacklogFullError;
      expect(error).toBeInstanceOf(BacklogFullError);
      expect(error.code).toBe('SPILLWAY_E_BACKLOG_FULL');
      expect(error).toMatchObject({ by: 'broker', signal: 'later', retryAfterMs: 250 });
    }
    expect((await setup.checkQueue(queue)).messageCount).toBe(3);
    publisher.dispose();
  });

  it('is acked by a queue left at the default overflow (drop-head): the broker never refuses', async () => {
    const queue = await declare('drop-head', { 'x-max-length': 3 });
    const publisher = confirmPublisher({ channel: confirms });
    await Promise.all([1, 2, 3, 4, 5].map(() => publisher.send(queue, body)));
    expect((await setup.checkQueue(queue)).messageCount).toBe(3);
  });
});

describe('queueDepth', () => {
  it('reads ready messages, plus what a local consumer holds unacknowledged', async () => {
    const queue = await declare('depth');
    for (let i = 0; i < 7; i++) setup.sendToQueue(queue, body);
    const probe = await connection.createChannel();
    const signal = new AbortController().signal;
    await waitFor(
      '7 ready',
      async () => (await queueDepth({ channel: probe, queue })({ signal })).messages === 7,
    );
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const consumer = await consumeWithPermits({
      channel: await connection.createChannel(),
      queue,
      limit: 2,
      handler: () => held,
    });
    consumers.push(consumer);
    const readLag = queueDepth({
      channel: probe,
      queue,
      unacked: () => consumer.active + consumer.waiting,
    });
    await waitFor('2 delivered', () => consumer.active === 2);
    await waitFor('5 ready', async () => (await setup.checkQueue(queue)).messageCount === 5);
    expect(await readLag({ signal })).toEqual({ messages: 7 });
    release();
    await probe.close();
  });
});

describe('lagGate fed by queueDepth', () => {
  it("holds a producer's backlog within maxLag + the publishes in flight", async () => {
    const queue = await declare('gate');
    const total = 600;
    const maxLag = 40;
    const producers = 3;
    let acked = 0;
    let admitted = 0;
    let refused = 0;
    let most = 0;
    const consumer = await consumeWithPermits({
      channel: await connection.createChannel(),
      queue,
      limit: 2,
      handler: () => new Promise((resolve) => setTimeout(resolve, 4)),
    });
    consumers.push(consumer);
    consumer.onSettle(() => (acked += 1));
    const probe = await connection.createChannel();
    const gate = lagGate({
      readLag: queueDepth({
        channel: probe,
        queue,
        unacked: () => consumer.active + consumer.waiting,
      }),
      maxLag,
      pollMs: 25,
      staleAfterMs: 2_000,
    });
    // Outstanding = admitted and not yet finished, checked at every admission.
    const counted = {
      tryAdmit: (n?: number) => {
        const r = gate.tryAdmit(n);
        if (r.ok) {
          admitted += 1;
          most = Math.max(most, admitted - acked);
        } else refused += 1;
        return r;
      },
    };
    const publisher = confirmPublisher({ channel: confirms, gate: counted });
    const produce = async (): Promise<void> => {
      while (admitted < total) {
        try {
          await publisher.send(queue, body);
        } catch (error) {
          if (!(error instanceof BacklogFullError)) throw error;
          await new Promise((resolve) =>
            setTimeout(resolve, Math.min(error.retryAfterMs ?? 5, 50)),
          );
        }
      }
    };
    await Promise.all(Array.from({ length: producers }, produce));
    await waitFor('all consumed', () => acked >= admitted, 20_000);
    expect(refused).toBeGreaterThan(0);
    // Each producer awaits its confirm: at most `producers` publishes in flight at a reading.
    expect(most).toBeLessThanOrEqual(maxLag + producers);
    await probe.close();
  });
});
