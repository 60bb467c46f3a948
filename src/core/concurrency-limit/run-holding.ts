/**
 * Work run under a permit (`limit.run`): once the limit has answered, the work runs or the
 * refusal is raised; the permit is released only once the work has settled, however it ends, and
 * told whether the ending signals overload (which adaptive limits treat as a drop).
 *
 * @module
 */
import { errorCodes } from '../errors/codes.js';
import { rejectionError } from '../errors/rejected-error.js';
import { isSpillwayError } from '../errors/spillway-error.js';
import { rejectSoon } from '../internal/reject-soon.js';
import type { LimitSample, LimitSource } from './limit-source.js';
import type { Permit, PermitOutcome } from './permit.js';
import type { AcquireOptions, AcquireResult, Work } from './types.js';

const neverAborted = new AbortController().signal;

/** The signal `run` hands the work: the caller's, else its deadline's, else one never aborted. */
export function runSignal(options: AcquireOptions | undefined): AbortSignal {
  const d = options?.deadline;
  return (
    options?.signal ??
    (typeof d === 'object' && 'signal' in d && d.signal instanceof AbortSignal
      ? d.signal
      : neverAborted)
  );
}

/**
 * The rest of `run` once the limit has answered: the work under the permit, or the refusal as
 * a `RejectedError`. An answer known at once is acted on at once (under overload, most often a
 * refusal, rejected once the caller listens: `rejectSoon`); a place in line waits for its turn.
 */
export function runAnswered<T>(
  answer: AcquireResult | Promise<AcquireResult>,
  fn: Work<T>,
  signal: AbortSignal,
): Promise<T> {
  if (!(answer instanceof Promise)) {
    return answer.ok ? runHolding(answer.permit, fn, signal) : rejectSoon(refusalOf(answer));
  }
  return answer.then((result) => {
    if (!result.ok) throw refusalOf(result);
    return runHolding(result.permit, fn, signal);
  });
}

/** The error `run` rejects with for a refused acquire. */
function refusalOf(r: Extract<AcquireResult, { ok: false }>): Error {
  return rejectionError(r.reason, { retryAfterMs: r.retryAfterMs });
}

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
