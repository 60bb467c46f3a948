/**
 * A `Map` with a hard size bound for the store's local caches: when full, the oldest
 * insertion leaves. Cheaper than an LRU and enough for entries that live a second or less;
 * entries read with `use` are moved to the end, which makes it one (the penalty box's views).
 *
 * @module
 */

/** Map bounded by entry count; evicts the oldest insertion. */
export class BoundedMap<V> {
  readonly #max: number;
  readonly #map = new Map<string, V>();

  constructor(maxKeys: number) {
    this.#max = maxKeys;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: string): V | undefined {
    return this.#map.get(key);
  }

  /**
   * The value for `key`, which now leaves last: a map read this way evicts the least recently
   * used (a `Map` keeps insertion order, so moving a key to the end is a delete and a set).
   */
  use(key: string): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    if (this.#map.size >= this.#max && !this.#map.has(key)) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
    this.#map.set(key, value);
  }

  delete(key: string): void {
    this.#map.delete(key);
  }

  /** The keys, oldest insertion first. */
  keys(): IterableIterator<string> {
    return this.#map.keys();
  }
}
