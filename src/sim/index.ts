/**
 * `spillway/sim`: a deterministic discrete-event simulator that runs Spillway's real
 * primitives — `dependency()` with its cap, retry loop, budget, breaker and adaptive throttle,
 * and `concurrencyLimit` (fixed or adaptive) as a server's admission — in simulated time, so
 * a retry storm or a metastable failure can be reproduced, and a fix tried, before production
 * does it. Servers are K slots with a service-time distribution; users arrive open-loop; every
 * random number comes from one seed, so a seed gives the same result byte for byte.
 *
 * @module
 */
export { simulate, simLimits } from './simulate.js';
export { seededRandom, type Random } from './random.js';
export { SimEventsFullError } from './sim-clock.js';
export { maxHistogramBuckets, type ServiceTime } from './service-time.js';
export { maxRateChanges, type ArrivalOptions } from './arrivals.js';
export type {
  ClientResult,
  NodeResult,
  RetryPolicy,
  SimClient,
  SimDependencyOptions,
  SimLimit,
  SimNode,
  SimulationOptions,
  SimulationResult,
} from './types.js';
export {
  chainPolicies,
  chainScenario,
  type ChainResult,
  type ChainRow,
  type ChainScenarioOptions,
} from './scenarios/chain.js';
export {
  defaultLoads,
  defaultTriggerSeconds,
  metastableCell,
  metastablePolicies,
  metastableScenario,
  metastableService,
  metastableTrigger,
  type MetastableCell,
  type MetastablePanel,
  type MetastableResult,
  type MetastableScenarioOptions,
} from './scenarios/metastable.js';
export {
  spikeCapacityPerSec,
  spikeScenario,
  spikeServer,
  spikeServers,
  spikeShapes,
  type SpikeResult,
  type SpikeRow,
  type SpikeScenarioOptions,
} from './scenarios/spike.js';
export {
  correctivePushScenario,
  pushPolicies,
  pushTimes,
  type CorrectivePushResult,
  type CorrectivePushScenarioOptions,
  type PushTimeline,
} from './scenarios/corrective-push.js';
