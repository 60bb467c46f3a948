/**
 * The broker scenario on RabbitMQ: each line is a classic queue of its own, bounded in time by
 * `x-message-ttl` in the `ttl` way. Publishes go through `confirmPublisher` on a connection of
 * their own (RabbitMQ blocks publishing connections), the lag is `queueDepth` plus the
 * consumer's unacknowledged deliveries, the consumer is `consumeWithPermits` with prefetch =
 * permits — Spillway's own adapters over the user's amqplib.
 *
 * @module
 */
import type * as Amqplib from 'amqplib';
import {
  confirmPublisher,
  consumeWithPermits,
  queueDepth,
  type PermitConsumer,
} from '../../../amqp/index.js';
import { loadPackage, maskedUrl, type BrokerLine, type BrokerPort } from './broker-port.js';
import { maxDurationMs, maxInFlightPublishes } from './settings.js';

/**
 * The consumer's own bound on a message's age, in ms: above any age the demo can reach (two
 * thirds of its longest run), so that in every way only the broker and the producer bound it.
 */
const consumerMaxAgeMs = maxDurationMs * 2;
/** A queue left behind by a run that was killed outright is deleted by RabbitMQ after this. */
const leftoverExpiresMs = 600_000;

/** Connects to RabbitMQ at `url` (`amqp://user:password@host:port`). */
export async function amqpPort(url: string): Promise<BrokerPort> {
  const module = await loadPackage('amqplib', () => import('amqplib'));
  // A CommonJS package: its exports are the module's default.
  const amqp = module.default;
  const producer = await amqp.connect(url);
  let consumerConnection: Amqplib.ChannelModel;
  try {
    consumerConnection = await amqp.connect(url);
  } catch (error) {
    await producer.close().catch(() => undefined);
    throw error;
  }
  // amqplib ends the process on an 'error' nobody listens to; a closed channel says enough.
  producer.on('error', () => undefined);
  consumerConnection.on('error', () => undefined);
  const setup = await producer.createChannel();
  const probe = await producer.createChannel();
  const publisher = confirmPublisher({
    channel: await producer.createConfirmChannel(),
    connection: producer,
    maxUnconfirmed: maxInFlightPublishes,
  });
  return {
    name: 'amqp',
    url: maskedUrl(url),
    async line({ name, ttlMs }): Promise<BrokerLine> {
      await setup.assertQueue(name, {
        durable: false,
        arguments: {
          'x-expires': leftoverExpiresMs,
          ...(ttlMs === undefined ? {} : { 'x-message-ttl': ttlMs }),
        },
      });
      let consumer: PermitConsumer | undefined;
      return {
        where: `queue ${name} on ${maskedUrl(url)}`,
        publish: (body) => publisher.send(name, Buffer.from(body), { timestamp: Date.now() }),
        readLag: queueDepth({
          channel: probe,
          queue: name,
          unacked: () => (consumer === undefined ? 0 : consumer.active + consumer.waiting),
        }),
        async consume({ permits, handler }) {
          const channel = await consumerConnection.createChannel();
          consumer = await consumeWithPermits({
            channel,
            queue: name,
            limit: permits,
            maxAgeMs: consumerMaxAgeMs,
            handler: (message) => handler(message.content.toString()),
          });
          const running = consumer;
          return {
            async stop() {
              await running.stop();
              await channel.close().catch(() => undefined);
            },
          };
        },
        async delete() {
          await setup.deleteQueue(name).catch(() => undefined);
        },
      };
    },
    async close() {
      publisher.dispose();
      await producer.close().catch(() => undefined);
      await consumerConnection.close().catch(() => undefined);
    },
  };
}
