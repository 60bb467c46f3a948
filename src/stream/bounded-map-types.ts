/**
 * The shapes of `boundedMap`: its options, what `fn` receives, and the iterable it returns.
 * Shapes only; `bounded-map.ts` builds one and `bounded-map-iterator.ts` implements it.
 *
 * @module
 */

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

/** The validated options. */
export interface BoundedMapSettings {
  readonly concurrency: number;
  readonly maxBuffered: number;
  readonly ordered: boolean;
  readonly signal: AbortSignal | undefined;
}
