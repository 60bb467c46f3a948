/**
 * Helpers for testing code that uses Spillway: a virtual clock (no fake timers, no sleeping)
 * and the conformance suite every {@link RateStore} must pass.
 *
 * @module
 */
export {
  createVirtualClock,
  type VirtualClock,
  type VirtualClockOptions,
} from './virtual-clock.js';
export {
  assertDecisionShape,
  rateStoreConformance,
  runConformance,
  type ConformanceCase,
  type ConformanceReport,
  type RateStoreConformanceOptions,
} from './rate-store-conformance.js';
