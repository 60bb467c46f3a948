/**
 * Work run under a permit: the permit is released only once the work has settled, however it
 * ends, and told whether the ending signals overload (which adaptive limits treat as a drop).
 *
 * @module
 */
import { errorCodes } from '../errors/codes.js';
import { isSpillwayError } from '../errors/spillway-error.js';
import type { LimitSample, LimitSource } from './limit-source.js';
import type { Permit, PermitOutcome } from './permit.js';
import type { Work } from './types.js';

/** Runs `fn` and releases the permit only once it has settled, however it ends. */
export async function runHolding<T>(permit: Permit, fn: Work<T>, signal: AbortSignal): Promise<T> {
  let outcome: PermitOutcome = 'ok';
  try {
    return await fn({ signal });
  } catch (error) {
    outcome = signal.aborted || signalsOverload(error) ? 'dropped' : 'ignored';
    throw error;
  } finally {
    permit.release(outcome);
  }
}

/** Failures that mean "too slow or too busy", which adaptive limits treat as drops. */
function signalsOverload(error: unknown): boolean {
  if (isSpillwayError(error)) {
    return error.code === errorCodes.overloaded || error.code === errorCodes.deadline;
  }
  return error instanceof Error && error.name === 'TimeoutError';
}

/** Reports a sample; a throwing user-supplied limit must not break the release that fed it. */
export function feed(source: LimitSource, sample: LimitSample): void {
  try {
    source.onSample!(sample);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
