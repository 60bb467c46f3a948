/**
 * Where `boundedMap` keeps results the consumer has not taken: one ring of `capacity` places.
 * Ordered, an item reserves the next place when it is pulled and is ready once done, so
 * results leave in source order; unordered, a result takes the next place when it is done.
 * The places in use never exceed `capacity`, because the map pulls only while the items it
 * holds (running or done) are fewer.
 *
 * @module
 */
export class ResultRing {
  readonly #capacity: number;
  readonly #ordered: boolean;
  // Grown as used rather than sized up front: `capacity` may be large and mostly idle.
  readonly #values: unknown[] = [];
  readonly #ready: boolean[] = [];
  #head = 0;
  #tail = 0;
  #size = 0;

  constructor(capacity: number, ordered: boolean) {
    this.#capacity = capacity;
    this.#ordered = ordered;
  }

  /** Results done and not yet taken (ordered: including those behind one still running). */
  get size(): number {
    return this.#size;
  }

  /** The place for an item just pulled (ordered); 0 when unordered, where it does not matter. */
  reserve(): number {
    return this.#ordered ? this.#tail++ : 0;
  }

  /** Stores the result of the item that reserved `place` (ordered), or the next place. */
  put(place: number, value: unknown): void {
    const at = (this.#ordered ? place : this.#tail++) % this.#capacity;
    this.#values[at] = value;
    this.#ready[at] = true;
    this.#size++;
  }

  /** Whether the next result in line is done. */
  canTake(): boolean {
    return this.#size > 0 && this.#ready[this.#head % this.#capacity] === true;
  }

  /** Takes the next result; call only after `canTake()`. */
  take(): unknown {
    const at = this.#head++ % this.#capacity;
    const value = this.#values[at];
    this.#values[at] = undefined;
    this.#ready[at] = false;
    this.#size--;
    return value;
  }

  /** Drops every result held. */
  clear(): void {
    this.#values.length = 0;
    this.#ready.length = 0;
    this.#size = 0;
  }
}
