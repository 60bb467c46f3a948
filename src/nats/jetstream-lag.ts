/**
 * A JetStream consumer's lag, as a lag source for `lagGate`: outstanding work is `num_pending`
 * (matching, not yet delivered) plus `num_ack_pending` (delivered, not yet acknowledged), from
 * one consumer info call; the oldest unfinished message's age from one more call, reading the
 * message just above the consumer's ack floor.
 *
 * @module
 */
import { systemClock, type Clock } from '../core/clock/clock.js';
import type { LagReading } from '../core/lag-gate/lag-gate.js';
import { clockLike, nonEmptyString, optionsObject } from '../core/internal/validate.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import type { JetStreamManagerLike } from './nats-like.js';

/** Options of {@link jetStreamLag}. */
export interface JetStreamLagOptions {
  /** A `JetStreamManager` (`await jetstreamManager(nc)`). Required. */
  readonly jsm: JetStreamManagerLike;
  /** The stream's name. Required. */
  readonly stream: string;
  /** The durable consumer's name. Required. */
  readonly consumer: string;
  /**
   * Also read the oldest unfinished message's age (one more request per reading). The age is
   * the local wall clock minus the server's store time: clock skew between hosts counts.
   * @default true
   */
  readonly age?: boolean | undefined;
  /** Wall time for the age. @default systemClock */
  readonly clock?: Clock | undefined;
}

/**
 * Creates a lag source for `lagGate({ readLag })` from a JetStream consumer. The oldest
 * unfinished message is taken to be the one just above the ack floor (the highest contiguous
 * acknowledged message): for a filtered consumer, or when later messages were acknowledged out
 * of order, that message is at least as old as the oldest unfinished one, so the age errs high,
 * never low. A message already gone (`max_age`, `max_msgs`) reports no age.
 *
 * @example
 * const gate = lagGate({ readLag: jetStreamLag({ jsm, stream: 'ORDERS', consumer: 'worker' }), maxLag: 1_000 });
 */
export function jetStreamLag(options: JetStreamLagOptions): () => Promise<LagReading> {
  const o = optionsObject('jetStreamLag options', options);
  const jsm = o.jsm;
  if (typeof jsm?.consumers?.info !== 'function' || typeof jsm.streams?.getMessage !== 'function') {
    throw new SpillwayConfigError('jsm', 'a JetStreamManager', jsm);
  }
  const stream = nonEmptyString('stream', o.stream);
  const consumer = nonEmptyString('consumer', o.consumer);
  const withAge = o.age ?? true;
  const clock = clockLike('clock', o.clock ?? systemClock);
  return async () => {
    const info = await jsm.consumers.info(stream, consumer);
    const messages = info.num_pending + info.num_ack_pending;
    if (!withAge || messages === 0) return { messages, oldestAgeMs: withAge ? 0 : undefined };
    const oldest = await jsm.streams.getMessage(stream, { seq: info.ack_floor.stream_seq + 1 });
    if (oldest === null) return { messages };
    const ageMs = clock.wallNow() - oldest.time.getTime();
    return { messages, oldestAgeMs: ageMs > 0 ? ageMs : 0 };
  };
}
