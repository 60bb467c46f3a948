/**
 * The broker scenario on NATS JetStream: each line is a memory stream of its own with one
 * durable pull consumer, bounded in time by the stream's `max_age` in the `ttl` way. Publishes
 * await their PubAck (`jetStreamPublisher`), the lag is `jetStreamLag`, the consumer is
 * `consumeWithPermits` — Spillway's own adapters over the user's `@nats-io` v3 packages.
 *
 * @module
 */
import type * as Jetstream from '@nats-io/jetstream';
import type * as Transport from '@nats-io/transport-node';
import { consumeWithPermits, jetStreamLag, jetStreamPublisher } from '../../../nats/index.js';
import { loadPackage, maskedUrl, type BrokerLine, type BrokerPort } from './broker-port.js';

/** A consumer's ack wait, in ms: far above the demo's handlers, which never fail. */
const ackWaitMs = 30_000;

/** Connects to NATS at `url` (`nats://host:port`). */
export async function natsPort(url: string): Promise<BrokerPort> {
  const transport = await loadPackage<typeof Transport>(
    '@nats-io/transport-node',
    () => import('@nats-io/transport-node'),
  );
  const js = await loadPackage<typeof Jetstream>(
    '@nats-io/jetstream',
    () => import('@nats-io/jetstream'),
  );
  const nc = await transport.connect({
    servers: url.replace(/^nats:\/\//, ''),
    timeout: 5_000,
  });
  const jsm = await js.jetstreamManager(nc);
  const client = js.jetstream(nc);
  const publisher = jetStreamPublisher({ js: client });
  return {
    name: 'nats',
    url: maskedUrl(url),
    async line({ name, ttlMs }): Promise<BrokerLine> {
      const subject = `${name}.messages`;
      const durable = 'worker';
      await jsm.streams.add({
        name,
        subjects: [subject],
        storage: js.StorageType.Memory,
        discard: js.DiscardPolicy.Old,
        ...(ttlMs === undefined ? {} : { max_age: ttlMs * 1e6 }),
      });
      await jsm.consumers.add(name, {
        durable_name: durable,
        ack_policy: js.AckPolicy.Explicit,
        ack_wait: ackWaitMs * 1e6,
      });
      return {
        where: `stream ${name} on ${maskedUrl(url)}`,
        async publish(body) {
          await publisher.publish(subject, body);
        },
        readLag: jetStreamLag({ jsm, stream: name, consumer: durable }),
        async consume({ permits, handler }) {
          const consumer = consumeWithPermits({
            consumer: await client.consumers.get(name, durable),
            limit: permits,
            // A pull as soon as one permit is free: the capacity the checks use assumes the
            // consumer is never idle while messages wait.
            batch: 2,
            handler: (message) => handler(message.string()),
          });
          return { stop: () => consumer.stop() };
        },
        async delete() {
          await jsm.streams.delete(name).catch(() => undefined);
        },
      };
    },
    async close() {
      await nc.close().catch(() => undefined);
    },
  };
}
