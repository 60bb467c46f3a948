/**
 * What a dependency publishes on `spillway:client:attempt` and `spillway:client:retry` (see
 * `src/channels`), worked out here from what the client already holds — the verdict, and the
 * error or answer an attempt ended with — so the client's one path gains one call at the
 * place it records an attempt's end, and nothing at all while nobody listens.
 *
 * @module
 */
import { errorCodes, isSpillwayError, type RetryBudget } from '../index.js';
import {
  attemptChannel,
  retryChannel,
  type AttemptOutcome,
  type LocalRefusal,
} from '../channels/channels.js';

const localReasons: Readonly<Record<string, LocalRefusal>> = {
  [errorCodes.circuitOpen]: 'circuit-open',
  [errorCodes.throttled]: 'throttled',
  [errorCodes.queueFull]: 'queue-full',
  [errorCodes.queueTimeout]: 'queue-timeout',
  [errorCodes.shed]: 'shed',
  [errorCodes.deadline]: 'deadline',
};

/**
 * Publishes how attempt `number` of a call to `dependency` ended: `outcome` (the client's
 * verdict) and `what` it ended with (an error, or the answer).
 */
export function publishAttempt(
  dependency: string,
  attempt: { readonly number: number; readonly outcome: AttemptOutcome },
  what: unknown,
): void {
  const status = (what as { status?: unknown } | null | undefined)?.status;
  attemptChannel.publish({
    dependency,
    attempt: attempt.number,
    outcome: attempt.outcome,
    status: typeof status === 'number' ? status : undefined,
    localReason:
      attempt.outcome !== 'local'
        ? undefined
        : ((isSpillwayError(what) ? localReasons[what.code] : undefined) ?? 'other'),
  });
}

/**
 * The retry loop's `onRetry` for `dependency`, while anyone listens on `spillway:client:retry`
 * (undefined otherwise, so an unobserved loop calls nothing).
 */
export function retryPublisher(
  dependency: string,
  budget: RetryBudget,
): ((event: { readonly attempt: number; readonly delayMs: number }) => void) | undefined {
  if (!retryChannel.hasSubscribers) return undefined;
  return ({ attempt, delayMs }) => {
    if (!retryChannel.hasSubscribers) return;
    retryChannel.publish({ dependency, attempt, backoffMs: delayMs, budgetLeft: budget.available });
  };
}
