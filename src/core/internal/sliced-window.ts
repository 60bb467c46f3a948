/**
 * Counters over a sliding time window cut into a fixed number of slices: the shared engine of
 * the ratio retry budget, the time-window breaker and the adaptive throttle. Memory is
 * `slices × counters` numbers whatever the traffic; a slice's counts leave the window whole
 * once it is `slices` slices old, so the window covers between `(slices − 1)` and `slices`
 * slices of history. Running totals make every read O(1) after the (amortised) rotation.
 * Internal: not exported from the package.
 *
 * @module
 */

/** Fixed-size sliced counters. Counts should stay integers so sums stay exact. */
export class SlicedWindow {
  readonly sliceMs: number;
  readonly slices: number;
  readonly counters: number;
  readonly #cells: Float64Array;
  readonly #totals: Float64Array;
  // Absolute index (floor(time / sliceMs)) of the newest slice, and where its cells start.
  #head: number;
  #headCell: number;

  constructor(options: {
    readonly sliceMs: number;
    readonly slices: number;
    readonly counters: number;
    readonly now: number;
  }) {
    this.sliceMs = options.sliceMs;
    this.slices = options.slices;
    this.counters = options.counters;
    this.#cells = new Float64Array(options.slices * options.counters);
    this.#totals = new Float64Array(options.counters);
    this.#head = Math.floor(options.now / options.sliceMs);
    this.#headCell = this.#index(this.#head) * options.counters;
  }

  /** Adds `n` to `counter` in the current slice. */
  add(counter: number, n: number, now: number): void {
    this.advance(now);
    this.addToLatest(counter, n);
  }

  /** The sum of `counter` over the live slices. */
  sum(counter: number, now: number): number {
    this.advance(now);
    return this.#totals[counter]!;
  }

  /**
   * Moves the window to `now`, dropping the slices that have aged out. `sumSoFar` and
   * `addToLatest` then read and count at that time: several reads and counts made at one
   * moment move the window once.
   */
  advance(now: number): void {
    const slice = Math.floor(now / this.sliceMs);
    // Time never runs backwards here.
    if (slice > this.#head) this.#rotate(slice);
  }

  /** The sum of `counter` over the live slices, as of the last move of the window. */
  sumSoFar(counter: number): number {
    return this.#totals[counter]!;
  }

  /** Adds `n` to `counter` in the newest slice, as of the last move of the window. */
  addToLatest(counter: number, n: number): void {
    this.#cells[this.#headCell + counter]! += n;
    this.#totals[counter]! += n;
  }

  /** Forgets everything. */
  clear(): void {
    this.#cells.fill(0);
    this.#totals.fill(0);
  }

  #index(slice: number): number {
    const n = this.slices;
    return ((slice % n) + n) % n;
  }

  /** Makes `slice` (later than the head) the newest slice, clearing those it passes. */
  #rotate(slice: number): void {
    const steps = slice - this.#head;
    const c = this.counters;
    if (steps >= this.slices) {
      this.clear();
    } else {
      const cells = this.#cells;
      const totals = this.#totals;
      for (let s = 1; s <= steps; s++) {
        const base = this.#index(this.#head + s) * c;
        for (let k = 0; k < c; k++) {
          totals[k]! -= cells[base + k]!;
          cells[base + k] = 0;
        }
      }
    }
    this.#head = slice;
    this.#headCell = this.#index(slice) * c;
  }
}
