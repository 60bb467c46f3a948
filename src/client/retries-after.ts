/**
 * The retries after a call's failed first attempt: the loop `retry()` runs (whether and when to
 * try again: the budget, backoff, the deadline, idempotence) over the client's attempts. Entered
 * only after a failure, so a call that succeeds at once never builds it.
 *
 * @module
 */
import { ThrottledError, type RetryBudget } from '../index.js';
import { retryAfterFailure } from '../core/internal/owned.js';
import { retryPublisher } from './attempt-message.js';
import type { Attempt } from './records.js';
import type { Settings } from './settings.js';

/** What the loop runs over. */
export interface Retries<T> {
  readonly settings: Settings;
  /** The dependency's budget, as its errors carry it (withdraw-only). */
  readonly budget: RetryBudget;
  /** Runs attempt `number` of the call, as the client does. */
  readonly attempt: (number: number) => Promise<T>;
}

/** Retries the call of `first`, which failed with `error`. */
export function retriesAfter<T>(first: Attempt<T>, error: unknown, r: Retries<T>): Promise<T> {
  const call = first.call;
  const s = r.settings;
  let last = error;
  // A retry the throttle refuses ends the call with what the attempt before it got (its
  // status, its wait, as `cause`), as a retry the budget refuses does.
  const again = ({ attempt: n }: { attempt: number }): Promise<T> =>
    r.attempt(n).catch((e: unknown) => {
      if (e instanceof ThrottledError && e.attempts === 0) {
        const failed = last as { status?: unknown; retryAfterMs?: unknown };
        throw new ThrottledError({
          rejectProbability: e.rejectProbability,
          dependency: s.name,
          attempts: n - 1,
          status: typeof failed.status === 'number' ? failed.status : undefined,
          retryAfterMs: typeof failed.retryAfterMs === 'number' ? failed.retryAfterMs : undefined,
          cause: last,
        });
      }
      last = e;
      throw e;
    });
  return retryAfterFailure(again, error, {
    maxAttempts: call.maxAttempts,
    budget: r.budget,
    backoff: s.backoff,
    signal: call.signal,
    idempotent: call.idempotent,
    deadline: call.expiresAt,
    dependency: s.name,
    clock: s.clock,
    onRetry: retryPublisher(s.name, r.budget),
  });
}
