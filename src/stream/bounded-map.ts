/**
 * `boundedMap`: map an async iterable with a concurrency cap and a bounded read-ahead, so a
 * fast source never runs away from a slow consumer (or a slow `fn`). The options and the
 * factory; the machinery is in `bounded-map-iterator.ts`.
 *
 * @module
 */
import { nonNegativeInteger, optionsObject, positiveInteger } from '../core/internal/validate.js';
import { BoundedMapIterator, type BoundedMapSettings } from './bounded-map-iterator.js';
import { functionArgument, iterableArgument, optionalBoolean, optionalSignal } from './validate.js';

/** Options of {@link boundedMap}. */
export interface BoundedMapOptions {
  /** Most `fn` calls running at once: a positive integer. Required. */
  readonly concurrency: number;
  /**
   * Most results held that the consumer has not taken yet (finished early, or waiting behind
   * an earlier item when `ordered`): an integer of 0 or more. Required. Together with
   * `concurrency` this bounds the items held at any moment, whatever the speeds: at most
   * `concurrency + maxBuffered` (running or done), plus the one being pulled from the source.
   */
  readonly maxBuffered: number;
  /**
   * Yield results in source order (`true`), or as they finish (`false`), which lets a slow
   * item hold up nothing but itself. @default true
   */
  readonly ordered?: boolean | undefined;
  /** Aborting stops pulling, aborts the work in flight and rejects the consumer's `next()`. */
  readonly signal?: AbortSignal | undefined;
}

/** What `fn` receives besides the item. */
export interface BoundedMapContext {
  /**
   * Aborts when the whole map stops early: `fn` failed for another item, the source threw, the
   * caller's signal aborted, or the consumer stopped iterating. Pass it down to the work.
   */
  readonly signal: AbortSignal;
}

/** The work applied to each item. */
export type BoundedMapFn<T, R> = (item: T, context: BoundedMapContext) => R | PromiseLike<R>;

/** The iterable {@link boundedMap} returns, with read-only counts of what it holds. */
export interface BoundedMap<R> extends AsyncIterableIterator<R>, AsyncDisposable {
  /** `fn` calls running now. */
  readonly active: number;
  /** Results done but not yet taken by the consumer. */
  readonly buffered: number;
  /**
   * Stops early (what `break` calls): aborts the calls in flight and resolves once they have
   * settled and the source is closed; rejects only if closing the source throws.
   */
  return(): Promise<IteratorResult<R>>;
}

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

/** Validates the options (`signal` too, unless the caller takes it from elsewhere). */
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
