/**
 * The broker scenario's fixed numbers, in one place: a consumer of exactly known capacity (the
 * demo's database: 10 permits × 30 ms = 333 messages/s), a producer offering three times that,
 * each message's useful life, and the bounds each way of running puts on the backlog.
 *
 * @module
 */

/** The three ways the producer and the broker are set up. */
export type BoundMode = 'fire-and-forget' | 'lag-gate' | 'ttl';

/** In the order they run and are shown. */
export const modes: readonly BoundMode[] = ['fire-and-forget', 'lag-gate', 'ttl'];

/** The brokers the scenario runs against. */
export type BrokerName = 'nats' | 'amqp' | 'redis';

export const brokerNames: readonly BrokerName[] = ['nats', 'amqp', 'redis'];

/** Where each broker is looked for unless `--broker-url` says otherwise. */
export const defaultBrokerUrls: Readonly<Record<BrokerName, string>> = {
  nats: 'nats://127.0.0.1:4222',
  amqp: 'amqp://guest:guest@127.0.0.1:5672',
  redis: 'redis://127.0.0.1:6379',
};

/** The consumer's work: slots, as the demo's database has connections. */
export const slots = 10;
/** How long each message holds its slot, in ms: the consumer's whole cost per message. */
export const serviceMs = 30;
/** Messages per second the consumer finishes when its slots are never idle: 333.3. */
export const capacityPerSec = (slots * 1_000) / serviceMs;
/**
 * Messages the consumer takes at once (its permits): half as many again as the slots, so that
 * the next messages are in hand when slots free — the broker's round trip for them, and short
 * pauses of this process, are hidden, and the capacity is the slots' alone. At most five wait
 * for a slot (15 ms of work).
 */
export const permits = slots + 5;
/** The producer offers this many times the capacity. */
export const overload = 3;
/** Messages offered per second: 1,000. */
export const offeredPerSec = Math.round(overload * capacityPerSec);

/**
 * A message's useful life, from when it should have been published, in ms: processed later
 * than this, it is dead work (whoever wanted it has given up, as the demo's callers do at 1 s).
 */
export const lifeMs = 1_000;

/**
 * The broker's TTL (`max_age`, `x-message-ttl`, `MINID` trimming) in the `ttl` way: a little
 * under the useful life, so that a message taken just before it expires is still finished in
 * time (30 ms of work, and the broker's expiry is not instant).
 */
export const ttlMs = 800;

/**
 * The lag gate's bound: 100 messages, 0.3 s of the consumer's work, so a message waits at most
 * about that long. It must stay above the drain between two readings (33 at `pollMs` 100), or
 * the gate idles the consumer.
 */
export const maxLag = 100;
/** The gate reads the broker's lag at most this often, in ms. */
export const gatePollMs = 100;
/** A reading older than this is stale and the gate closes, in ms. */
export const gateStaleAfterMs = 1_000;

/** How often the demo itself samples the broker's lag for the table and the charts, in ms. */
export const sampleEveryMs = 250;

/** Publishes awaiting the broker's acknowledgement at once; more are dropped (and flagged). */
export const maxInFlightPublishes = 2_000;

/**
 * The producer's schedule lag p99 above which a run is flagged not valid, in ms: twice the load
 * generator's 5 ms, a hundredth of a message's life. A process that late is held up by the
 * machine, and its consumer with it.
 */
export const maxScheduleLagP99Ms = 10;

/**
 * How late the consumer may notice its jobs' ends (p99, ms) before a run is flagged not valid.
 * The messages in hand cover 15 ms of the slots' work ((permits − slots) × serviceMs ÷ slots);
 * a process held up longer leaves slots idle, and the capacity the checks use was not offered.
 */
export const maxServiceLateP99Ms = 10;

/** The measured part of each way, in ms, unless `--broker-seconds` says otherwise. */
export const defaultDurationMs = 20_000;
/** `--quick`: long enough for the fire-and-forget backlog to outlive its messages. */
export const quickDurationMs = 8_000;
/**
 * Shortest `--broker-seconds`: the checks read the second half of the run, which must start
 * after the fire-and-forget backlog has outgrown a message's life (1.5 s at 3×).
 */
export const minDurationMs = 4_000;
export const maxDurationMs = 300_000;
