/**
 * The simulator's one source of randomness: a seeded 32-bit generator (mulberry32), so the same
 * seed gives the same run, byte for byte. Everything random in a run — arrivals, service times,
 * the backoff's jitter, the throttle's coin — draws from generators made here, never from
 * `Math.random`.
 *
 * @module
 */
import { SpillwayConfigError } from '../index.js';

/** A source of uniform numbers in [0, 1), as the primitives' `random` options take. */
export type Random = () => number;

/**
 * A mulberry32 generator seeded with `seed` (any integer; taken modulo 2^32).
 *
 * @example
 * const random = seededRandom(42);
 * random(); // the same first number for every run seeded 42
 */
export function seededRandom(seed: number): Random {
  if (!Number.isInteger(seed)) throw new SpillwayConfigError('seed', 'an integer', seed);
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A generator of its own for each part of a run (derived from the run's seed and the part's
 * index), so adding a client does not shift every other part's numbers.
 */
export function forkRandom(seed: number, index: number): Random {
  return seededRandom(
    (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(index + 1, 0xc2b2ae35)) | 0,
  );
}

/** An exponentially distributed number with mean `mean` (inverse CDF; never Infinity). */
export function exponential(random: Random, mean: number): number {
  return -Math.log(1 - random()) * mean;
}
