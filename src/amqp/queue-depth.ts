/**
 * A lag source for `lagGate` read from RabbitMQ over AMQP: a passive `queue.declare`
 * (`checkQueue`) answers the queue's ready messages. RabbitMQ does not count deliveries that
 * await their ack there, and AMQP tells neither rates nor the age of the oldest message, so
 * the reading is `messages` only, plus the unacknowledged count a local consumer can add.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { nonEmptyString, optionsObject } from '../core/internal/validate.js';
import type { LagReading, ReadLag } from '../core/lag-gate/lag-gate.js';
import type { AmqpQueueChannel } from './amqp-like.js';

/** Options of {@link queueDepth}. */
export interface QueueDepthOptions {
  /**
   * A channel to ask on. Use one of its own: asking about a queue that does not exist closes the
   * channel (404), so a failed read must not take a publisher's or a consumer's channel with it.
   * Required.
   */
  readonly channel: AmqpQueueChannel;
  /** The queue. Required. */
  readonly queue: string;
  /**
   * Messages delivered and not yet acknowledged, which `checkQueue` does not count: for a
   * consumer in this process, `() => consumer.active + consumer.waiting`. Without it the reading
   * is short by at most the consumers' prefetch. @default () => 0
   */
  readonly unacked?: (() => number) | undefined;
}

/**
 * A `readLag` for `lagGate`: ready messages in `queue`, plus `unacked()` (no `oldestAgeMs`:
 * AMQP cannot tell it). Each call is one round trip to the broker; the gate calls it at most
 * once per `pollMs` and gives up on it after `staleAfterMs` (the broker's answer is then
 * ignored: `checkQueue` cannot be cancelled).
 *
 * @example
 * const gate = lagGate({ readLag: queueDepth({ channel: probe, queue: 'orders' }), maxLag: 1_000 });
 */
export function queueDepth(options: QueueDepthOptions): ReadLag {
  const o = optionsObject('queueDepth options', options);
  const channel = o.channel;
  if (typeof channel?.checkQueue !== 'function') {
    throw new SpillwayConfigError('channel', 'an amqplib channel (with checkQueue)', channel);
  }
  const queue = nonEmptyString('queue', o.queue);
  const unacked = o.unacked ?? (() => 0);
  if (typeof unacked !== 'function') {
    throw new SpillwayConfigError('unacked', 'a function returning a count', unacked);
  }
  return async (): Promise<LagReading> => {
    const info = await channel.checkQueue(queue);
    const extra = unacked();
    return { messages: info.messageCount + (Number.isFinite(extra) && extra > 0 ? extra : 0) };
  };
}
