/**
 * `spillway/stream`: backpressure for async iterables and Node streams. `boundedMap` maps with a
 * concurrency cap and a bounded read-ahead; `writeAll` writes an iterable to a writable,
 * waiting for `drain`; the stage adapters put a `concurrencyLimit` (or a `creditGate`) inside
 * a `stream.pipeline`. See docs/streams.md.
 *
 * @module
 */
export {
  boundedMap,
  type BoundedMap,
  type BoundedMapContext,
  type BoundedMapFn,
  type BoundedMapOptions,
} from './bounded-map.js';
export { writeAll, type WriteAllOptions } from './write-all.js';
export { limitStage, type LimitStageOptions } from './limit-stage.js';
export { creditStage } from './credit-stage.js';
export type { PipelineStage, StageOptions } from './stage.js';
