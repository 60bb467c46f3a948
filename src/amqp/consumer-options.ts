/**
 * The options of `consumeWithPermits`, their defaults (one object), and their checks: a bad
 * option fails at construction with a message naming it, as every Spillway factory words it.
 *
 * @module
 */
import type { Clock } from '../core/clock/clock.js';
import { systemClock } from '../core/clock/clock.js';
import { concurrencyLimit } from '../core/concurrency-limit/concurrency-limit.js';
import type { ConcurrencyLimit } from '../core/concurrency-limit/types.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import {
  clockLike,
  nonEmptyString,
  nonNegativeNumber,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../core/internal/validate.js';
import type { AmqpConsumeChannel, AmqpMessage } from './amqp-like.js';

/** What a handler is given besides the message. */
export interface HandlerContext {
  /**
   * Aborts at the message's deadline (reason: `DeadlineExceededError`) or when the channel
   * closes. Pass it down to the work.
   */
  readonly signal: AbortSignal;
  /** The message's deadline, absolute on the consumer's clock (ms). */
  readonly deadline: number;
}

/** Works on one message. Resolving acks it; throwing follows the rule in docs/brokers.md. */
export type MessageHandler = (message: AmqpMessage, context: HandlerContext) => unknown;

/** Options of `consumeWithPermits`. */
export interface ConsumeWithPermitsOptions {
  /** The channel to consume on (amqplib's `Channel`); the consumer sets its prefetch. Required. */
  readonly channel: AmqpConsumeChannel;
  /** The queue to consume from. Required. */
  readonly queue: string;
  /**
   * Handlers running at once: a positive integer, or a `concurrencyLimit` (fixed or adaptive,
   * possibly shared with other work). Required.
   */
  readonly limit: number | ConcurrencyLimit;
  /** Works on one message. Required. */
  readonly handler: MessageHandler;
  /**
   * Unacknowledged messages the broker may send this consumer (per-consumer `basic.qos`, at
   * most 65,535). Deliveries waiting for a permit are held in memory, so this is also that
   * line's bound. For an adaptive limit, give its maximum: RabbitMQ does not change a running
   * consumer's prefetch. @default `limit` (a number) or `limit.limit` when the consumer starts
   */
  readonly prefetch?: number | undefined;
  /**
   * A message's useful life in ms, counted from its `timestamp` if it has one, else from its
   * delivery; a shorter per-message `expiration` wins. Set it to the queue's `x-message-ttl`.
   * @default 30_000
   */
  readonly maxAgeMs?: number | undefined;
  /**
   * How long a handler that ignores its aborted signal keeps its permit past the deadline, in
   * ms; then the permit is freed, the message dead-lettered and the handler's result ignored.
   * @default 1_000
   */
  readonly settleGraceMs?: number | undefined;
  /** Hold for a `later` refusal that names no `retryAfterMs`, in ms. @default 1_000 */
  readonly defaultRetryAfterMs?: number | undefined;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock | undefined;
}

/** The options after checks and defaults. */
export interface ConsumerSettings {
  readonly channel: AmqpConsumeChannel;
  readonly queue: string;
  readonly limit: ConcurrencyLimit;
  /** True when the caller gave the limit (it may be shared: listen for its releases). */
  readonly sharedLimit: boolean;
  readonly handler: MessageHandler;
  readonly prefetch: number;
  readonly maxAgeMs: number;
  readonly settleGraceMs: number;
  readonly defaultRetryAfterMs: number;
  readonly clock: Clock;
}

const defaults = { maxAgeMs: 30_000, settleGraceMs: 1_000, defaultRetryAfterMs: 1_000 } as const;

/** AMQP's `prefetch-count` is an unsigned short. */
const maxPrefetch = 65_535;

function isLimit(value: unknown): value is ConcurrencyLimit {
  const v = value as Partial<ConcurrencyLimit> | null;
  return typeof v === 'object' && v !== null && typeof v.tryAcquire === 'function';
}

/** Checks the options and fills in defaults; throws `SpillwayConfigError` naming the option. */
export function consumerSettings(options: ConsumeWithPermitsOptions): ConsumerSettings {
  const o = optionsObject('consumeWithPermits options', options);
  const channel = o.channel;
  if (typeof channel?.consume !== 'function' || typeof channel.prefetch !== 'function') {
    throw new SpillwayConfigError('channel', 'an amqplib channel', channel);
  }
  if (typeof o.handler !== 'function') {
    throw new SpillwayConfigError('handler', 'a function', o.handler);
  }
  const clock = clockLike('clock', o.clock ?? systemClock);
  const sharedLimit = isLimit(o.limit);
  const limit = isLimit(o.limit)
    ? o.limit
    : concurrencyLimit({ limit: positiveInteger('limit', o.limit), clock });
  const prefetch = positiveInteger('prefetch', o.prefetch ?? Math.min(limit.limit, maxPrefetch));
  if (prefetch > maxPrefetch) {
    throw new SpillwayConfigError('prefetch', `a positive integer up to ${maxPrefetch}`, prefetch);
  }
  return {
    channel,
    queue: nonEmptyString('queue', o.queue),
    limit,
    sharedLimit,
    handler: o.handler,
    prefetch,
    maxAgeMs: positiveNumber('maxAgeMs', o.maxAgeMs ?? defaults.maxAgeMs),
    settleGraceMs: nonNegativeNumber('settleGraceMs', o.settleGraceMs ?? defaults.settleGraceMs),
    defaultRetryAfterMs: positiveNumber(
      'defaultRetryAfterMs',
      o.defaultRetryAfterMs ?? defaults.defaultRetryAfterMs,
    ),
    clock,
  };
}
