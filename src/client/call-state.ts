/**
 * A call's options, checked and settled into its state: deadline, criticality, idempotence and
 * the caller's signals joined into one.
 *
 * @module
 */
import {
  criticalities,
  criticalityRank,
  isCriticality,
  SpillwayArgumentError,
  type Clock,
} from '../index.js';
import type { CallState, Work } from './records.js';
import { joinSignals } from './attempt-scope.js';
import type { CallOptions } from './types.js';

/**
 * The state of a call of `work` with `options`; throws `SpillwayArgumentError` naming a bad
 * option, before anything is taken.
 */
export function callStateOf<T>(
  work: Work<T>,
  options: CallOptions | undefined,
  settings: { readonly clock: Clock; readonly maxAttempts: number },
): CallState<T> {
  const maxAttempts = work.replayable ? settings.maxAttempts : 1;
  if (options === undefined) {
    return {
      work,
      maxAttempts,
      expiresAt: Infinity,
      deadlineSignalled: false,
      signal: work.signal,
      unlink: undefined,
      criticality: 'critical',
      rank: 1,
      idempotent: work.idempotent,
      requested: false,
    };
  }
  if (typeof options !== 'object' || options === null) {
    throw new SpillwayArgumentError('options', 'an options object', options);
  }
  const { signal, criticality = 'critical', deadline, idempotent } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new SpillwayArgumentError('signal', 'an AbortSignal', signal);
  }
  if (!isCriticality(criticality)) {
    throw new SpillwayArgumentError(
      'criticality',
      `one of ${criticalities.join(', ')}`,
      criticality,
    );
  }
  if (idempotent !== undefined && typeof idempotent !== 'boolean') {
    throw new SpillwayArgumentError('idempotent', 'a boolean', idempotent);
  }
  let expiresAt = Infinity;
  let deadlineSignal: AbortSignal | undefined;
  if (typeof deadline === 'number') {
    if (Number.isNaN(deadline) || deadline < 0) {
      throw new SpillwayArgumentError('deadline', 'milliseconds from now (0 or more)', deadline);
    }
    expiresAt = settings.clock.now() + deadline;
  } else if (deadline !== undefined) {
    if (
      typeof deadline !== 'object' ||
      deadline === null ||
      typeof deadline.expiresAt !== 'number' ||
      Number.isNaN(deadline.expiresAt)
    ) {
      throw new SpillwayArgumentError(
        'deadline',
        'an object with expiresAt on the clock, or milliseconds from now',
        deadline,
      );
    }
    expiresAt = deadline.expiresAt;
    if (deadline.signal instanceof AbortSignal) deadlineSignal = deadline.signal;
  }
  const joined = joinSignals(signal, work.signal, deadlineSignal);
  return {
    work,
    maxAttempts,
    expiresAt,
    deadlineSignalled: deadlineSignal !== undefined,
    signal: joined?.signal,
    unlink: joined?.unlink,
    criticality,
    rank: criticalityRank(criticality),
    idempotent: idempotent ?? work.idempotent,
    requested: false,
  };
}
