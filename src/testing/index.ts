/**
 * Helpers for testing code that uses Spillway: a virtual clock (no fake timers, no sleeping),
 * a simulated resource of known capacity (`createSlotServer`) and the conformance suite every
 * {@link RateStore} must pass.
 *
 * @module
 */
export {
  createVirtualClock,
  type VirtualClock,
  type VirtualClockOptions,
} from './virtual-clock.js';
export {
  createSlotServer,
  type SlotServer,
  type SlotServerCallback,
  type SlotServerOptions,
} from './slot-server.js';
export {
  assertDecisionShape,
  rateStoreConformance,
  runConformance,
  type ConformanceCase,
  type ConformanceReport,
  type RateStoreConformanceOptions,
} from './rate-store-conformance.js';
export {
  keyManagementConformance,
  type KeyManagementConformanceOptions,
} from './key-management-conformance.js';
