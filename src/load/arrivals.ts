/**
 * Arrival schedules for the open-loop generator: when each request *should* be sent,
 * independent of how the server answers (BENCHMARKS.md rule 1). Pure and seeded, so a run's
 * schedule can be replayed and tested without sockets.
 *
 * @module
 */

/** How arrivals are spaced: evenly (`constant`, as wrk2 and vegeta) or at random (`poisson`). */
export type Arrival = 'constant' | 'poisson';

/** The arrival processes, for validation and help text. */
export const arrivals: readonly Arrival[] = ['constant', 'poisson'];

/** Options of {@link arrivalSchedule}. */
export interface ArrivalScheduleOptions {
  readonly arrival: Arrival;
  /** Mean arrivals per second. */
  readonly ratePerSec: number;
  /** Seed of the Poisson process (ignored for `constant`). */
  readonly seed: number;
}

/**
 * Returns a function that yields the intended offset (ms from the group's start) of each
 * successive arrival: 0, 1000/rate, 2000/rate, … for `constant` (computed from the index, so
 * no rounding error accumulates), exponential gaps with mean 1000/rate for `poisson`.
 */
export function arrivalSchedule(options: ArrivalScheduleOptions): () => number {
  const intervalMs = 1000 / options.ratePerSec;
  if (options.arrival === 'constant') {
    let index = 0;
    return () => index++ * intervalMs;
  }
  const random = seededRandom(options.seed);
  let at = 0;
  let first = true;
  return () => {
    if (first) {
      first = false;
      return 0;
    }
    // 1 - u is in (0, 1], so the log is finite.
    at += -Math.log(1 - random()) * intervalMs;
    return at;
  };
}

/**
 * A small, fast, seeded PRNG (mulberry32) returning floats in [0, 1). Not for cryptography:
 * it only has to make Poisson schedules and jitter reproducible.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
