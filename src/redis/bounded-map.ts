/**
 * A `Map` with a hard size bound for the store's local caches: when full, the oldest
 * insertion leaves. Cheaper than an LRU and enough for entries that live a second or less.
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
