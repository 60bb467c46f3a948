// Shared by the NATS tests. They need NATS with JetStream at 127.0.0.1:4222 (`.ci/run` starts
// it): every test makes its own memory stream and durable consumer, with unique names, and
// deletes them afterwards.
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  StorageType,
  type Consumer,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';

export const natsUrl = '127.0.0.1:4222';

/** One connection, its JetStream handles, and a stream + durable consumer made for one test. */
export interface Fixture {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  readonly subject: string;
  readonly durable: string;
  consumer(): Promise<Consumer>;
  close(): Promise<void>;
}

/** A memory stream (extra `config` merged in) and a durable pull consumer with `ackWaitMs`. */
export async function fixture(
  name: string,
  config: Partial<StreamConfig> = {},
  ackWaitMs = 2_000,
): Promise<Fixture> {
  const id = `spw_${name}_${randomBytes(4).toString('hex')}`;
  const nc = await connect({ servers: natsUrl });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const stream = id;
  const subject = `${id}.msgs`;
  const durable = `${id}_worker`;
  await jsm.streams.add({
    name: stream,
    subjects: [subject],
    storage: StorageType.Memory,
    discard: DiscardPolicy.Old,
    ...config,
  });
  await jsm.consumers.add(stream, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    ack_wait: ackWaitMs * 1e6,
    max_ack_pending: 10_000,
  });
  return {
    nc,
    js,
    jsm,
    stream,
    subject,
    durable,
    consumer: () => js.consumers.get(stream, durable),
    async close() {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    },
  };
}

/** Resolves when `check` is true, polling every 20 ms; throws after `withinMs`. */
export async function eventually(
  what: string,
  check: () => Promise<boolean> | boolean,
  withinMs = 10_000,
): Promise<void> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`not within ${withinMs} ms: ${what}`);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
