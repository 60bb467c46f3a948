/**
 * The arithmetic every token bucket shares (one bucket, keyed buckets, the memory store): the
 * tolerance for floating-point drift, the exact wait for missing tokens, and what a take may ask.
 *
 * @module
 */
import { SpillwayArgumentError } from '../errors/argument-error.js';

/**
 * Tolerance, in tokens, for floating-point drift: without it, waiting exactly `retryAfterMs`
 * could leave the bucket 1e-15 tokens short and refuse again.
 */
export const tokenEpsilon = 1e-6;

/** Whole milliseconds until `missing` tokens are due at `ratePerMs`, never less than 1. */
export function waitMs(missing: number, ratePerMs: number): number {
  const ms = Math.ceil((missing - tokenEpsilon / 2) / ratePerMs);
  return ms < 1 ? 1 : ms;
}

/** `n` must be a positive integer no larger than `burst` (a larger take could never succeed). */
export function checkTake(n: unknown, burst: number): void {
  const problem = takeProblem(n, burst);
  if (problem !== undefined) throw problem;
}

/** What is wrong with a take of `n`, as the error to throw or reject with; undefined if fine. */
export function takeProblem(n: unknown, burst: number): SpillwayArgumentError | undefined {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    return new SpillwayArgumentError('n', 'a positive integer', n);
  }
  if (n > burst) {
    return new SpillwayArgumentError(
      'n',
      `at most burst (${burst}); this take could never succeed`,
      n,
    );
  }
  return undefined;
}
