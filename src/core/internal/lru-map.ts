/**
 * A map bounded by entry count that evicts the least recently used entry: a `Map` for lookup
 * plus an intrusive doubly linked list for recency, so get, set and evict are all O(1). A pinned
 * entry (a key somebody waits on) leaves the recency list, so it is never the one evicted while
 * an unpinned entry exists. Internal: not exported from the package.
 *
 * @module
 */

interface Entry<V> {
  readonly key: string;
  value: V;
  newer: Entry<V> | undefined;
  older: Entry<V> | undefined;
  pinned: boolean;
}

/** Map with a hard size bound; the least recently used entry leaves when a new key arrives. */
export class LruMap<V> {
  readonly maxKeys: number;
  readonly #map = new Map<string, Entry<V>>();
  #newest: Entry<V> | undefined;
  #oldest: Entry<V> | undefined;
  #evictions = 0;
  #pinned = 0;

  constructor(maxKeys: number) {
    this.maxKeys = maxKeys;
  }

  /** Entries held now (never more than `maxKeys`). */
  get size(): number {
    return this.#map.size;
  }

  /** Entries pinned now. */
  get pinned(): number {
    return this.#pinned;
  }

  /** Entries evicted since creation, to tell users when `maxKeys` is too small. */
  get evictions(): number {
    return this.#evictions;
  }

  /** The value for `key`, marking it most recently used. */
  get(key: string): V | undefined {
    const entry = this.#map.get(key);
    if (entry === undefined) return undefined;
    if (entry !== this.#newest && !entry.pinned) this.#toFront(entry);
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
      if (existing !== this.#newest && !existing.pinned) this.#toFront(existing);
      return;
    }
    if (this.#map.size >= this.maxKeys) this.#evictOldest();
    const entry: Entry<V> = { key, value, newer: undefined, older: this.#newest, pinned: false };
    if (this.#newest !== undefined) this.#newest.newer = entry;
    this.#newest = entry;
    this.#oldest ??= entry;
    this.#map.set(key, entry);
  }

  /** Removes `key`; true if it was there. */
  delete(key: string): boolean {
    const entry = this.#map.get(key);
    if (entry === undefined) return false;
    if (entry.pinned) {
      entry.pinned = false;
      this.#pinned--;
    } else this.#unlink(entry);
    this.#map.delete(key);
    return true;
  }

  /**
   * Keeps `key` from eviction until {@link LruMap.unpin}; false if it is absent or already
   * pinned. Only when every entry is pinned does a new key evict one (the oldest pinned), so the
   * bound holds whatever happens; callers keep fewer than `maxKeys` pinned to avoid that.
   */
  pin(key: string): boolean {
    const entry = this.#map.get(key);
    if (entry === undefined || entry.pinned) return false;
    this.#unlink(entry);
    entry.pinned = true;
    this.#pinned++;
    return true;
  }

  /** Lets `key` be evicted again, as the most recently used. */
  unpin(key: string): void {
    const entry = this.#map.get(key);
    if (entry === undefined || !entry.pinned) return;
    entry.pinned = false;
    this.#pinned--;
    this.#link(entry);
  }

  /** Removes everything. */
  clear(): void {
    this.#map.clear();
    this.#pinned = 0;
    this.#newest = undefined;
    this.#oldest = undefined;
  }

  /** Unpinned keys from most to least recently used. */
  *keys(): IterableIterator<string> {
    for (let e = this.#newest; e !== undefined; e = e.older) yield e.key;
  }

  #evictOldest(): void {
    const oldest = this.#oldest;
    if (oldest !== undefined) {
      this.#unlink(oldest);
      this.#map.delete(oldest.key);
    } else {
      // Every entry pinned: the bound wins over the pin (the first pinned, in insertion order).
      const first = this.#map.keys().next();
      if (first.done === true) return;
      this.delete(first.value);
    }
    this.#evictions++;
  }

  #toFront(entry: Entry<V>): void {
    this.#unlink(entry);
    this.#link(entry);
  }

  #link(entry: Entry<V>): void {
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
