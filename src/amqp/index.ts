/**
 * `spillway/amqp`: RabbitMQ (AMQP 0-9-1) over an amqplib connection the application already
 * has (amqplib is an optional peer dependency, typed here by shape). A lag source for
 * `lagGate` (`queueDepth`), a consumer whose prefetch is its permits (`consumeWithPermits`), a
 * publisher that turns the broker's nack and `connection.blocked` into typed `later` errors
 * (`confirmPublisher`, `blockedGate`). See docs/brokers.md.
 *
 * @module
 */
export type {
  AmqpConfirmChannel,
  AmqpConnection,
  AmqpConsumeChannel,
  AmqpMessage,
  AmqpPublishOptions,
  AmqpQueueChannel,
  AmqpQueueInfo,
  ConfirmCallback,
} from './amqp-like.js';
export { queueDepth, type QueueDepthOptions } from './queue-depth.js';
export {
  consumeWithPermits,
  type DeadLetterEvent,
  type PermitConsumer,
  type SettleEvent,
} from './consume-with-permits.js';
export type {
  ConsumeWithPermitsOptions,
  HandlerContext,
  MessageHandler,
} from './consumer-options.js';
export type { DeadLetterReason, Settlement } from './settle-rule.js';
export {
  blockedGate,
  type BlockedChangeEvent,
  type BlockedGate,
  type BlockedGateOptions,
  type BlockedGateResult,
} from './blocked-gate.js';
export {
  confirmPublisher,
  type AdmissionGate,
  type ConfirmPublisher,
  type ConfirmPublisherOptions,
  type Destination,
  type SendOptions,
} from './confirm-publisher.js';
export { BrokerBlockedError, type BrokerBlockedErrorOptions } from './broker-blocked-error.js';
export {
  BacklogFullError,
  type BacklogFullErrorOptions,
  type BacklogRefusedBy,
} from '../core/errors/backlog-full-error.js';
