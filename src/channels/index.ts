/**
 * `spillway/channels`: the names and message types of every diagnostics channel Spillway
 * publishes on (see `channels.ts`, the one registry), and the channels themselves, typed.
 * Subscribing costs the publishers one message per decision; nothing is built while nobody
 * listens. `spillway/otel` turns them into OpenTelemetry metrics and trace marks.
 *
 * @module
 */
export {
  admissionChannel,
  admissionsPublished,
  attemptChannel,
  breakerChannel,
  channelNames,
  limitChannel,
  penaltyChannel,
  queuedChannel,
  quotaChannel,
  refusalChannel,
  releaseChannel,
  requestChannel,
  retryChannel,
  retryStormChannel,
  storeDegradedChannel,
  storeRecoveredChannel,
  type AdmissionMessage,
  type AdmissionResult,
  type AttemptMessage,
  type AttemptOutcome,
  type BreakerStateMessage,
  type LimitChangeMessage,
  type LocalRefusal,
  type PenaltyMessage,
  type QueuedMessage,
  type QuotaMessage,
  type QuotaResult,
  type RefusalMessage,
  type ReleaseMessage,
  type RequestTraceMessage,
  type RetryMessage,
  type RetryStormMessage,
  type StoreDegradedMessage,
  type StoreRecoveredMessage,
  type TypedChannel,
} from './channels.js';
