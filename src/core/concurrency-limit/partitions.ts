/**
 * Guaranteed shares of a concurrency limit per criticality, after Netflix's partitioned
 * limiter: while the limit has room, anyone may take a slot (an idle share is lent out); once
 * every slot is taken, work still within its criticality's share — ⌈limit × share⌉ permits —
 * is admitted anyway, past the limit and past the line. A burst of one criticality therefore
 * never locks another out of its share, at the price of overshooting the limit by at most the
 * shares of the criticalities that arrive late (bounded by Σ ⌈limit × share⌉). Internal.
 *
 * @module
 */
import { criticalities, criticalityRank, type Criticality } from '../criticality/criticality.js';
import { SpillwayConfigError } from '../errors/config-error.js';

/** Share of the limit guaranteed to each criticality, as fractions summing to at most 1. */
export type PartitionShares = { readonly [C in Criticality]?: number };

/** Per-criticality shares and the permits each criticality holds. */
export class Partitions {
  readonly #shares: readonly number[];
  readonly #busy = [0, 0, 0, 0];

  constructor(shares: readonly number[]) {
    this.#shares = shares;
  }

  /** Validates the `partitions` option; undefined when partitioning is off. */
  static from(value: unknown): Partitions | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new SpillwayConfigError('partitions', 'an object of criticality → share', value);
    }
    const shares = [0, 0, 0, 0];
    let sum = 0;
    for (const [name, share] of Object.entries(value)) {
      const rank = criticalityRank(name);
      if (rank < 0) {
        throw new SpillwayConfigError('partitions', `keys among ${criticalities.join(', ')}`, name);
      }
      if (typeof share !== 'number' || !(share >= 0 && share <= 1)) {
        throw new SpillwayConfigError(`partitions.${name}`, 'a number from 0 to 1', share);
      }
      shares[rank] = share;
      sum += share;
    }
    if (sum > 1 + 1e-9)
      throw new SpillwayConfigError('partitions', 'shares summing to at most 1', sum);
    return new Partitions(shares);
  }

  /** Whether work of this rank is still within its guaranteed share of `limit`. */
  entitled(rank: number, limit: number): boolean {
    const share = this.#shares[rank]!;
    return share > 0 && this.#busy[rank]! < Math.ceil(limit * share);
  }

  acquired(rank: number): void {
    this.#busy[rank]!++;
  }

  released(rank: number): void {
    this.#busy[rank]!--;
  }
}
