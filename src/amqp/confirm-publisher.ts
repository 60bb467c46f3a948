/**
 * A publisher that hears RabbitMQ's refusals. On a confirm channel each publish resolves on the
 * broker's ack and rejects on its nack: a queue declared with `x-max-length` and
 * `x-overflow: reject-publish` nacks once full, and that becomes a typed `later` error
 * (`BacklogFullError`, `by: 'broker'`) instead of amqplib's opaque "message nacked". Before
 * sending it consults its gates: the connection's `blocked` state and, if given, a `lagGate`.
 *
 * @module
 */
import { BacklogFullError } from '../core/errors/backlog-full-error.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { QueueFullError } from '../core/errors/rejected-error.js';
import { optionsObject, positiveInteger, positiveNumber } from '../core/internal/validate.js';
import type { AmqpConfirmChannel, AmqpConnection, AmqpPublishOptions } from './amqp-like.js';
import { blockedGate, type BlockedGate } from './blocked-gate.js';
import { BrokerBlockedError } from './broker-blocked-error.js';

/** A producer-side gate consulted before each publish, such as a `lagGate`. */
export interface AdmissionGate {
  tryAdmit(
    n?: number,
  ): { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };
}

/** Options of {@link confirmPublisher}. */
export interface ConfirmPublisherOptions {
  /** A channel in confirm mode (`connection.createConfirmChannel()`). Required. */
  readonly channel: AmqpConfirmChannel;
  /**
   * The connection the channel belongs to: while RabbitMQ blocks it (`connection.blocked`),
   * publishes are refused with `BrokerBlockedError` instead of hanging. @default undefined
   */
  readonly connection?: AmqpConnection | undefined;
  /** Consulted before each publish; a refusal is a `BacklogFullError` (`by: 'gate'`). */
  readonly gate?: AdmissionGate | undefined;
  /**
   * Most publishes awaiting their confirm; one more is refused at once (`QueueFullError`).
   * @default 1_000
   */
  readonly maxUnconfirmed?: number | undefined;
  /** The wait named by a refusal the broker gives no time for (blocked, nacked), in ms. @default 1_000 */
  readonly retryAfterMs?: number | undefined;
}

/** Where a message goes: a queue (through the default exchange), or an exchange and key. */
export type Destination = string | { readonly exchange: string; readonly routingKey: string };

/** Options of one publish: amqplib's, plus a signal. */
export interface SendOptions extends AmqpPublishOptions {
  /** Stops waiting for the confirm (the message may still be enqueued). */
  readonly signal?: AbortSignal | undefined;
}

/** A publisher on a confirm channel. */
export interface ConfirmPublisher extends Disposable {
  /**
   * Publishes and resolves when the broker confirms. Rejects with `BacklogFullError`
   * (`by: 'broker'` when nacked, `by: 'gate'` when the gate refused; not sent),
   * `BrokerBlockedError` (connection blocked; not sent), `QueueFullError` (`maxUnconfirmed`
   * reached; not sent), the signal's reason, or amqplib's error when the channel fails.
   */
  send(destination: Destination, content: Buffer, options?: SendOptions): Promise<void>;
  /** Publishes awaiting their confirm. */
  readonly unconfirmed: number;
  /** The gate following the connection's `blocked` state, if a connection was given. */
  readonly blocked: BlockedGate | undefined;
  /** Stops listening to the connection. */
  dispose(): void;
}

/** amqplib's words when the broker nacks a publish. */
const nacked = 'message nacked';

class Publisher implements ConfirmPublisher {
  readonly #channel: AmqpConfirmChannel;
  readonly #gate: AdmissionGate | undefined;
  readonly #max: number;
  readonly #retryAfterMs: number;
  readonly blocked: BlockedGate | undefined;
  #unconfirmed = 0;
  /** Resolves at the channel's next `drain` once a write returned false. */
  #drained: Promise<void> | undefined;

  constructor(options: ConfirmPublisherOptions) {
    const o = optionsObject('confirmPublisher options', options);
    const channel = o.channel;
    if (typeof channel?.sendToQueue !== 'function' || typeof channel.publish !== 'function') {
      throw new SpillwayConfigError('channel', 'an amqplib confirm channel', channel);
    }
    if (o.gate !== undefined && typeof o.gate?.tryAdmit !== 'function') {
      throw new SpillwayConfigError('gate', 'a gate with tryAdmit (such as a lagGate)', o.gate);
    }
    this.#channel = channel;
    this.#gate = o.gate;
    this.#max = positiveInteger('maxUnconfirmed', o.maxUnconfirmed ?? 1_000);
    this.#retryAfterMs = positiveNumber('retryAfterMs', o.retryAfterMs ?? 1_000);
    this.blocked =
      o.connection === undefined
        ? undefined
        : blockedGate({ connection: o.connection, retryAfterMs: this.#retryAfterMs });
  }

  get unconfirmed(): number {
    return this.#unconfirmed;
  }

  async send(destination: Destination, content: Buffer, options: SendOptions = {}): Promise<void> {
    const { signal, ...publishOptions } = options;
    signal?.throwIfAborted();
    if (this.blocked !== undefined && !this.blocked.open) {
      throw new BrokerBlockedError({
        detail: this.blocked.detail,
        retryAfterMs: this.#retryAfterMs,
      });
    }
    if (this.#unconfirmed >= this.#max) throw new QueueFullError();
    const admitted = this.#gate?.tryAdmit(1);
    if (admitted !== undefined && !admitted.ok) {
      throw new BacklogFullError({ by: 'gate', retryAfterMs: admitted.retryAfterMs });
    }
    this.#unconfirmed += 1;
    let confirmed: Promise<void>;
    try {
      if (this.#drained !== undefined) await abortable(this.#drained, signal);
      confirmed = this.#write(destination, content, publishOptions);
    } catch (error) {
      this.#unconfirmed -= 1;
      throw error;
    }
    return abortable(confirmed, signal);
  }

  /** Sends one message; the promise settles on its confirm, and frees its place then. */
  #write(destination: Destination, content: Buffer, options: AmqpPublishOptions): Promise<void> {
    const name =
      typeof destination === 'string'
        ? destination
        : `${destination.exchange}/${destination.routingKey}`;
    return new Promise<void>((resolve, reject) => {
      const confirm = (err: unknown): void => {
        this.#unconfirmed -= 1;
        if (err === null || err === undefined) resolve();
        else if (err instanceof Error && err.message === nacked) {
          reject(
            new BacklogFullError({
              by: 'broker',
              detail: `${name}: nacked (x-overflow reject-publish)`,
              retryAfterMs: this.#retryAfterMs,
              cause: err,
            }),
          );
        } else reject(asError(err));
      };
      const written =
        typeof destination === 'string'
          ? this.#channel.sendToQueue(destination, content, options, confirm)
          : this.#channel.publish(
              destination.exchange,
              destination.routingKey,
              content,
              options,
              confirm,
            );
      if (!written && this.#drained === undefined) {
        this.#drained = new Promise<void>((done) => {
          this.#channel.once('drain', () => {
            this.#drained = undefined;
            done();
          });
        });
      }
    });
  }

  dispose(): void {
    this.blocked?.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** An Error as is; anything else wrapped (as its `cause`). */
function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error('The publish failed', { cause: value });
}

/** `promise`, or the signal's reason if it aborts first; the listener is removed either way. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(asError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(asError(error));
      },
    );
  });
}

/**
 * Creates a publisher on a confirm channel. Declare the queue with `x-max-length` (or
 * `x-max-length-bytes`) and `x-overflow: 'reject-publish'`, or the broker never refuses: the
 * default `drop-head` acks the publish and drops the oldest message instead.
 *
 * @example
 * const publisher = confirmPublisher({ channel: await conn.createConfirmChannel(), connection: conn });
 * try {
 *   await publisher.send('orders', Buffer.from(JSON.stringify(order)));
 * } catch (error) {
 *   if (error instanceof BacklogFullError) return reply503(error.retryAfterMs);
 *   throw error;
 * }
 */
export function confirmPublisher(options: ConfirmPublisherOptions): ConfirmPublisher {
  return new Publisher(options);
}
