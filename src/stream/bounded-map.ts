/**
 * `boundedMap`: map an async iterable with a concurrency cap and a bounded read-ahead, so a
 * fast source never runs away from a slow consumer (or a slow `fn`). The factory and its
 * option checks; the shapes are in `bounded-map-types.ts`, the machinery in
 * `bounded-map-iterator.ts`.
 *
 * @module
 */
import { nonNegativeInteger, optionsObject, positiveInteger } from '../core/internal/validate.js';
import { BoundedMapIterator } from './bounded-map-iterator.js';
import type {
  BoundedMap,
  BoundedMapFn,
  BoundedMapOptions,
  BoundedMapSettings,
} from './bounded-map-types.js';
import { functionArgument, iterableArgument, optionalBoolean, optionalSignal } from './validate.js';

export type {
  BoundedMap,
  BoundedMapContext,
  BoundedMapFn,
  BoundedMapOptions,
} from './bounded-map-types.js';

/**
 * Maps `source` through `fn`, at most `concurrency` calls at a time, pulling the next item only
 * when a slot is free and the results held leave room (`active + buffered < concurrency +
 * maxBuffered`): a consumer slower than the source makes the source wait, rather than memory
 * grow. Iterate it once.
 *
 * The first failure (`fn` throws or rejects, the source throws, `signal` aborts) stops
 * everything: no more items are pulled, the source is closed (`return()`, unless it threw),
 * the signal given to the calls in flight aborts, results not yet taken are dropped, and once
 * the calls in flight have settled the consumer's `next()` rejects with that first error, once.
 * A consumer that stops early (`break`) gets the same clean-up: its `return()` resolves once
 * the calls in flight have settled and the source is closed. So `fn` should honour its signal.
 *
 * Invalid arguments throw a `SpillwayConfigError` naming the option and the value here, not
 * on the first `next()`. The source is not touched until the first `next()`.
 *
 * @example
 * for await (const row of boundedMap(ids, (id, { signal }) => fetchRow(id, { signal }), {
 *   concurrency: 8,
 *   maxBuffered: 16,
 * })) {
 *   await save(row);
 * }
 */
export function boundedMap<T, R>(
  source: AsyncIterable<T> | Iterable<T>,
  fn: BoundedMapFn<T, R>,
  options: BoundedMapOptions,
): BoundedMap<Awaited<R>> {
  iterableArgument('source', source);
  functionArgument('fn', fn);
  return new BoundedMapIterator<T, R>(source, fn, boundedMapSettings(options, 'boundedMap'));
}

/** Validates the options; `limitStage` uses it too (then without a signal, which the pipeline gives). */
export function boundedMapSettings(
  options: BoundedMapOptions,
  factory: string,
): BoundedMapSettings {
  const o = optionsObject(`${factory} options`, options);
  return {
    concurrency: positiveInteger('concurrency', o.concurrency),
    maxBuffered: nonNegativeInteger('maxBuffered', o.maxBuffered),
    ordered: optionalBoolean('ordered', o.ordered, true),
    signal: optionalSignal('signal', o.signal),
  };
}
