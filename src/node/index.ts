/**
 * `spillway/node`: the admission guard for node:http servers, and the diagnostics channel it
 * publishes refusals on. Express and Fastify adapters (`spillway/express`, `spillway/fastify`)
 * are thin translations over this.
 *
 * @module
 */
export { admission, type Admission, type AdmittedHandler } from './admission.js';
export type { AdmissionOptions } from './admission-options.js';
export type { EscalatedInfo, GuardHookOptions, RefusedInfo } from './guard-hooks.js';
export type { QuotaKeys, QuotaKeyState } from './quota-keys.js';
export type { AdmitResult } from './admit-result.js';
export { refusalChannel, type RefusalMessage } from './refusal-channel.js';
export type { RetryStormOptions } from './storm-signal.js';
export { writeRefusal } from './write-refusal.js';
export { clientAddress, clientKey, type TrustProxy } from './client-address.js';
export { requestHeader } from './request-fields.js';
export {
  Admitted,
  ClientDisconnectedError,
  type AbortCause,
  type RequestContext,
} from './request-context.js';
export type { CriticalityPolicy, QuotaOptions, RouteOptions, RouteSettings } from './route.js';
export type {
  PerClient,
  QuotaContext,
  QuotaPolicyOptions,
  QuotaSharedOptions,
  RatePolicyOptions,
  WindowPolicyOptions,
} from './quota-options.js';
export type { RateLimitHeaders } from './route-quota.js';
export {
  eventLoopMonitor,
  type EventLoopMonitor,
  type EventLoopMonitorOptions,
  type EventLoopSample,
} from './event-loop-monitor.js';
export {
  memoryMonitor,
  type MemoryMonitor,
  type MemoryMonitorOptions,
  type MemorySample,
} from './memory-monitor.js';
