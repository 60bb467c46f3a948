/**
 * The few parts of an amqplib channel and connection that `spillway/amqp` uses, typed by
 * shape so the adapter needs no type package at run time or at build time: amqplib 0.10 and
 * 2.x both fit, and so does a test's fake. amqplib is an optional peer dependency.
 *
 * @module
 */

/** A delivered message, as amqplib hands it to a consumer. */
export interface AmqpMessage {
  readonly content: Buffer;
  readonly fields: { readonly deliveryTag: number; readonly redelivered: boolean };
  readonly properties: {
    /** Per-message TTL in ms (amqplib gives the string the publisher set). */
    readonly expiration?: unknown;
    /** When it was published: seconds by the AMQP spec, ms as many Node producers write it. */
    readonly timestamp?: unknown;
    readonly messageId?: unknown;
    readonly headers?: Readonly<Record<string, unknown>> | undefined;
  };
}

/** What `checkQueue` (a passive `queue.declare`) answers. */
export interface AmqpQueueInfo {
  /** Messages ready to deliver; unacknowledged deliveries are not counted. */
  readonly messageCount: number;
  readonly consumerCount: number;
}

/** A channel that can look at a queue (`queueDepth`). */
export interface AmqpQueueChannel {
  checkQueue(queue: string): PromiseLike<AmqpQueueInfo>;
}

/** A channel a consumer runs on (`consumeWithPermits`). */
export interface AmqpConsumeChannel {
  prefetch(count: number, global?: boolean): PromiseLike<unknown>;
  consume(
    queue: string,
    onMessage: (message: AmqpMessage | null) => void,
    options?: { readonly noAck?: boolean },
  ): PromiseLike<{ readonly consumerTag: string }>;
  cancel(consumerTag: string): PromiseLike<unknown>;
  /** With `allUpTo`, every outstanding delivery on the channel up to this one (`multiple`). */
  ack(message: AmqpMessage, allUpTo?: boolean): void;
  nack(message: AmqpMessage, allUpTo?: boolean, requeue?: boolean): void;
  on(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/** Options of a publish, as amqplib takes them (only the ones Spillway reads are named). */
export interface AmqpPublishOptions {
  readonly expiration?: string | number;
  readonly timestamp?: number;
  readonly messageId?: string;
  readonly persistent?: boolean;
  readonly headers?: Record<string, unknown>;
  readonly [option: string]: unknown;
}

/** The callback amqplib calls when the broker confirms (`err` null) or nacks a publish. */
export type ConfirmCallback = (err: unknown, ok: unknown) => void;

/** A channel in confirm mode (`connection.createConfirmChannel()`). */
export interface AmqpConfirmChannel {
  sendToQueue(
    queue: string,
    content: Buffer,
    options?: AmqpPublishOptions,
    callback?: ConfirmCallback,
  ): boolean;
  publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options?: AmqpPublishOptions,
    callback?: ConfirmCallback,
  ): boolean;
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/** A connection (amqplib's `ChannelModel`), for its `blocked` and `unblocked` events. */
export interface AmqpConnection {
  on(event: 'blocked', listener: (reason: string) => void): unknown;
  on(event: 'unblocked', listener: () => void): unknown;
  off(event: 'blocked', listener: (reason: string) => void): unknown;
  off(event: 'unblocked', listener: () => void): unknown;
}
