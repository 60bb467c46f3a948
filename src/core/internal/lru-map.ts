/**
 * A map bounded by entry count that evicts the least recently used entry: a `Map` for lookup
 * plus an intrusive doubly linked list for recency, so get, set and evict are all O(1).
 * Internal: not exported from the package.
 *
 * @module
 */

interface Entry<V> {
  readonly key: string;
  value: V;
  newer: Entry<V> | undefined;
  older: Entry<V> | undefined;
}

/** Map with a hard size bound; the least recently used entry leaves when a new key arrives. */
export class LruMap<V> {
  readonly maxKeys: number;
  readonly #map = new Map<string, Entry<V>>();
  #newest: Entry<V> | undefined;
  #oldest: Entry<V> | undefined;
  #evictions = 0;

  constructor(maxKeys: number) {
    this.maxKeys = maxKeys;
  }

  /** Entries held now (never more than `maxKeys`). */
  get size(): number {
    return this.#map.size;
  }

  /** Entries evicted since creation, to tell users when `maxKeys` is too small. */
  get evictions(): number {
    return this.#evictions;
  }

  /** The value for `key`, marking it most recently used. */
  get(key: string): V | undefined {
    const entry = this.#map.get(key);
    if (entry === undefined) return undefined;
    if (entry !== this.#newest) this.#toFront(entry);
    return entry.value;
  }

  /** The value for `key` without touching recency. */
  peek(key: string): V | undefined {
    return this.#map.get(key)?.value;
  }

  /** Sets `key`, evicting the least recently used entry if the map is full. */
  set(key: string, value: V): void {
    const existing = this.#map.get(key);
    if (existing !== undefined) {
      existing.value = value;
      if (existing !== this.#newest) this.#toFront(existing);
      return;
    }
    if (this.#map.size >= this.maxKeys) this.#evictOldest();
    const entry: Entry<V> = { key, value, newer: undefined, older: this.#newest };
    if (this.#newest !== undefined) this.#newest.newer = entry;
    this.#newest = entry;
    this.#oldest ??= entry;
    this.#map.set(key, entry);
  }

  /** Removes `key`; true if it was there. */
  delete(key: string): boolean {
    const entry = this.#map.get(key);
    if (entry === undefined) return false;
    this.#unlink(entry);
    this.#map.delete(key);
    return true;
  }

  /** Removes everything. */
  clear(): void {
    this.#map.clear();
    this.#newest = undefined;
    this.#oldest = undefined;
  }

  /** Keys from most to least recently used. */
  *keys(): IterableIterator<string> {
    for (let e = this.#newest; e !== undefined; e = e.older) yield e.key;
  }

  #evictOldest(): void {
    const oldest = this.#oldest;
    if (oldest === undefined) return;
    this.#unlink(oldest);
    this.#map.delete(oldest.key);
    this.#evictions++;
  }

  #toFront(entry: Entry<V>): void {
    this.#unlink(entry);
    entry.older = this.#newest;
    entry.newer = undefined;
    if (this.#newest !== undefined) this.#newest.newer = entry;
    this.#newest = entry;
    this.#oldest ??= entry;
  }

  #unlink(entry: Entry<V>): void {
    if (entry.newer === undefined) this.#newest = entry.older;
    else entry.newer.older = entry.older;
    if (entry.older === undefined) this.#oldest = entry.newer;
    else entry.older.newer = entry.newer;
    entry.newer = undefined;
    entry.older = undefined;
  }
}
