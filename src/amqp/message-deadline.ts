/**
 * When a delivered message stops being worth working on: its per-message TTL (`expiration`)
 * or the consumer's `maxAgeMs`, whichever ends first, counted from when it was published if it
 * carries a `timestamp`, else from its delivery. Pure: the clock readings are passed in.
 *
 * @module
 */
import type { AmqpMessage } from './amqp-like.js';

/**
 * An AMQP `timestamp` in ms of wall time. The spec says seconds; many Node producers write
 * `Date.now()`. Values below 1e11 are read as seconds (1e11 s is the year 5138, 1e11 ms is
 * 1973), larger ones as ms. Anything else is unknown.
 */
export function publishedAtMs(timestamp: unknown): number | undefined {
  const t = typeof timestamp === 'bigint' ? Number(timestamp) : timestamp;
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) return undefined;
  return t < 1e11 ? t * 1000 : t;
}

/** A per-message TTL in ms (`expiration` is a string of digits), or undefined. */
export function expirationMs(expiration: unknown): number | undefined {
  const ms =
    typeof expiration === 'string' && /^\d+$/.test(expiration) ? Number(expiration) : expiration;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** The clock readings a deadline is computed from. */
export interface DeadlineInput {
  readonly properties: AmqpMessage['properties'];
  /** The consumer's bound on a message's age, in ms. */
  readonly maxAgeMs: number;
  /** Monotonic time now (the consumer's clock), in ms. */
  readonly now: number;
  /** Wall time now, in ms since the epoch (to compare with the message's timestamp). */
  readonly wallNow: number;
}

/**
 * The message's deadline on the monotonic clock: `now` plus what is left of its life. A
 * timestamp in the future (clock skew between hosts) counts as age 0, never as extra life.
 */
export function messageDeadline(input: DeadlineInput): number {
  const { properties, maxAgeMs, now, wallNow } = input;
  const ttl = expirationMs(properties.expiration);
  const lifeMs = ttl === undefined || ttl > maxAgeMs ? maxAgeMs : ttl;
  const published = publishedAtMs(properties.timestamp);
  const ageMs = published === undefined || published > wallNow ? 0 : wallNow - published;
  return now + lifeMs - ageMs;
}
