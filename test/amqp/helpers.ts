// Shared by the RabbitMQ tests, which need RabbitMQ at 127.0.0.1:5672 (guest/guest): `.ci/run`
// starts it when it is down. Each test declares queues of its own (unique names) and deletes
// them afterwards; waits poll the broker with a bounded deadline, never a bare sleep.
import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel } from 'amqplib';
import type {
  AmqpConfirmChannel,
  AmqpConnection,
  AmqpConsumeChannel,
  AmqpQueueChannel,
} from '../../src/amqp/index.js';

export const amqpUrl = process.env['SPILLWAY_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A connection with an `error` listener (amqplib crashes the process without one). */
export async function connect(): Promise<ChannelModel> {
  const connection = await amqp.connect(amqpUrl);
  connection.on('error', () => {});
  return connection;
}

/** A queue name no other test or run uses. */
export function uniqueQueue(label: string): string {
  return `spw-test-${label}-${randomUUID().slice(0, 8)}`;
}

/** Polls `check` until it returns true; fails after `timeoutMs` with `what`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (performance.now() > until) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Deletes queues on a channel of its own (a missing queue does not fail it). */
export async function deleteQueues(connection: ChannelModel, queues: string[]): Promise<void> {
  const channel = await connection.createChannel();
  for (const q of queues) await channel.deleteQueue(q);
  await channel.close();
}

// amqplib's own types fit the shapes spillway/amqp asks for (checked by the compiler).
type Fits<A, B> = A extends B ? true : never;
export const typesFit: [
  Fits<Channel, AmqpConsumeChannel>,
  Fits<Channel, AmqpQueueChannel>,
  Fits<ConfirmChannel, AmqpConfirmChannel>,
  Fits<ChannelModel, AmqpConnection>,
] = [true, true, true, true];
