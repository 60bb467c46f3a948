/**
 * `spillway/nats`: NATS JetStream with the slow-down signal kept across the broker. A lag source
 * for `lagGate` (`jetStreamLag`), a pull consumer that takes only what its permits allow
 * (`consumeWithPermits`), and a publisher whose "stream full" is a typed `later`
 * (`jetStreamPublisher`, `backlogFullFrom`). Works over the application's own
 * `@nats-io/jetstream` v3 objects (an optional peer), recognised by shape.
 *
 * @module
 */
export { jetStreamLag, type JetStreamLagOptions } from './jetstream-lag.js';
export {
  consumeWithPermits,
  type ConsumeWithPermitsOptions,
  type MessageContext,
  type PermitConsumer,
  type PermitConsumerCounts,
  type SettleEvent,
} from './consume-with-permits.js';
export {
  backlogFullFrom,
  jetStreamPublisher,
  type JetStreamPublisher,
  type JetStreamPublisherOptions,
} from './jetstream-publisher.js';
export type { NatsSettlement, TermReason } from './settle.js';
export type {
  ConsumerInfoLike,
  DeliveryInfoLike,
  FetchedLike,
  JetStreamManagerLike,
  JetStreamMessageLike,
  JetStreamPublishLike,
  PullConsumerLike,
  SequenceLike,
} from './nats-like.js';
