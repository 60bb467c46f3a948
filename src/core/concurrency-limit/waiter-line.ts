/**
 * The line in front of a concurrency limit: one intrusive doubly linked list per criticality,
 * so joining, leaving from anywhere (abort, timeout), serving from either end and displacing the
 * least critical newest waiter are all O(1). Internal: not exported from the package.
 *
 * @module
 */
import type { TimerHandle } from '../clock/clock.js';

/** One caller waiting for a slot. */
export interface Waiter {
  /** 0 = critical-plus … 3 = sheddable. */
  readonly rank: number;
  enqueuedAt: number;
  expiresAt: number;
  timer: TimerHandle | undefined;
  signal: AbortSignal | undefined;
  older: Waiter | undefined;
  newer: Waiter | undefined;
  /** Set when the waiter leaves the line, so a late timer or abort finds nothing to do. */
  settled: boolean;
}

const ranks = 4;

/** Waiters grouped by criticality, oldest to newest within each group. */
export class WaiterLine {
  readonly #oldest: (Waiter | undefined)[] = new Array<Waiter | undefined>(ranks).fill(undefined);
  readonly #newest: (Waiter | undefined)[] = new Array<Waiter | undefined>(ranks).fill(undefined);
  readonly #counts: number[] = new Array<number>(ranks).fill(0);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Appends at the newest end of its criticality group. */
  push(waiter: Waiter): void {
    const r = waiter.rank;
    const tail = this.#newest[r];
    waiter.older = tail;
    waiter.newer = undefined;
    if (tail === undefined) this.#oldest[r] = waiter;
    else tail.newer = waiter;
    this.#newest[r] = waiter;
    this.#counts[r]!++;
    this.#size++;
  }

  /** Removes a waiter from wherever it stands. */
  remove(waiter: Waiter): void {
    const r = waiter.rank;
    if (waiter.older === undefined) this.#oldest[r] = waiter.newer;
    else waiter.older.newer = waiter.newer;
    if (waiter.newer === undefined) this.#newest[r] = waiter.older;
    else waiter.newer.older = waiter.older;
    waiter.older = undefined;
    waiter.newer = undefined;
    this.#counts[r]!--;
    this.#size--;
  }

  /** The next waiter to serve: most critical group first; its oldest (FIFO) or newest (LIFO). */
  next(lifo: boolean): Waiter | undefined {
    for (let r = 0; r < ranks; r++) {
      const w = lifo ? this.#newest[r] : this.#oldest[r];
      if (w !== undefined) return w;
    }
    return undefined;
  }

  /** The newest waiter of the least critical group that is less critical than `rank`. */
  displaceable(rank: number): Waiter | undefined {
    for (let r = ranks - 1; r > rank; r--) {
      const w = this.#newest[r];
      if (w !== undefined) return w;
    }
    return undefined;
  }

  /** The oldest waiter of the given group. */
  oldest(rank: number): Waiter | undefined {
    return this.#oldest[rank];
  }

  /** The newest waiter of the given group. */
  newest(rank: number): Waiter | undefined {
    return this.#newest[rank];
  }

  /** Waiters in the given group. */
  count(rank: number): number {
    return this.#counts[rank]!;
  }

  /** How many waiters would be served before a new arrival of `rank`. */
  ahead(rank: number, lifo: boolean): number {
    let n = 0;
    for (let r = 0; r < rank; r++) n += this.#counts[r]!;
    return lifo ? n : n + this.#counts[rank]!;
  }
}

/** Number of criticality groups. */
export const rankCount = ranks;
