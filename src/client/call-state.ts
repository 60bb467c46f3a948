/**
 * A call's options, checked and settled into its state: deadline, criticality, idempotence and
 * the caller's signals joined into one. Inside a request's ambient context (and unless the
 * dependency opted out), the deadline and the criticality a call does not give are the
 * request's, exactly as if written `{ deadline: context, criticality: context.criticality }`.
 *
 * @module
 */
import {
  criticalities,
  criticalityRank,
  isCriticality,
  SpillwayArgumentError,
  systemClock,
  type Clock,
  type Criticality,
} from '../index.js';
import {
  ambientStore,
  expiresAtOn,
  type AmbientContext,
} from '../core/ambient-context/ambient-context.js';
import type { FallbackSettings } from './fallback.js';
import type { CallState, Work } from './records.js';
import { joinSignals } from './attempt-scope.js';
import type { CallOptions } from './types.js';

/** What a call's state is made from, besides its work. */
interface CallSettings {
  readonly clock: Clock;
  readonly maxAttempts: number;
  /** Whether calls read the ambient context. */
  readonly ambient: boolean;
  /** The dependency's fallback, if it has one. */
  readonly fallback: FallbackSettings | undefined;
}

/**
 * The state of a call of `work` with `options`; throws `SpillwayArgumentError` naming a bad
 * option, before anything is taken.
 */
export function callStateOf<T>(
  work: Work<T>,
  options: CallOptions<T> | undefined,
  settings: CallSettings,
): CallState<T> {
  const maxAttempts = work.replayable ? settings.maxAttempts : 1;
  const ambient = settings.ambient ? ambientStore.getStore() : undefined;
  if (options === undefined && ambient === undefined) {
    return {
      work,
      maxAttempts,
      expiresAt: Infinity,
      readAt: Number.NaN,
      deadlineSignalled: false,
      signal: work.signal,
      unlink: undefined,
      criticality: 'critical',
      rank: 1,
      idempotent: work.idempotent,
      requested: false,
      fallback: work.defaultFallback,
      lastVerdict: undefined,
    };
  }
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new SpillwayArgumentError('options', 'an options object', options);
  }
  const signal = options?.signal;
  const criticality: Criticality = options?.criticality ?? ambient?.criticality ?? 'critical';
  const idempotent = options?.idempotent;
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
  const fallback = options?.fallback;
  if (fallback !== undefined && fallback !== false) {
    if (typeof fallback !== 'function') {
      throw new SpillwayArgumentError('fallback', 'a function of the error, or false', fallback);
    }
    if (settings.fallback === undefined) {
      throw new SpillwayArgumentError(
        'fallback',
        'given only to a dependency made with `fallback: { on }`',
        fallback,
      );
    }
  }
  const deadline = options?.deadline;
  const { expiresAt, readAt, deadlineSignal, signalled } =
    deadline === undefined && ambient !== undefined
      ? ambientDeadline(ambient, settings.clock)
      : deadlineOf(deadline, settings.clock);
  const joined = joinSignals(signal, work.signal, deadlineSignal);
  return {
    work,
    maxAttempts,
    expiresAt,
    readAt: readAt ?? Number.NaN,
    deadlineSignalled: signalled,
    signal: joined?.signal,
    unlink: joined?.unlink,
    criticality,
    rank: criticalityRank(criticality),
    idempotent: idempotent ?? work.idempotent,
    requested: false,
    fallback: fallback === false ? undefined : (fallback ?? work.defaultFallback),
    lastVerdict: undefined,
  };
}

/** A settled deadline: when, the signal that aborts at it (if any), and whether it does so. */
interface SettledDeadline {
  readonly expiresAt: number;
  /** The clock's reading `expiresAt` was made from, if one was made (a deadline in ms). */
  readonly readAt?: number;
  readonly deadlineSignal: AbortSignal | undefined;
  /** True when `deadlineSignal` aborts at `expiresAt` itself, so no timer is needed. */
  readonly signalled: boolean;
}

const noDeadline: SettledDeadline = {
  expiresAt: Infinity,
  deadlineSignal: undefined,
  signalled: false,
};

/** The `deadline` option, checked. */
function deadlineOf(deadline: CallOptions['deadline'], clock: Clock): SettledDeadline {
  if (deadline === undefined) return noDeadline;
  if (typeof deadline === 'number') {
    if (Number.isNaN(deadline) || deadline < 0) {
      throw new SpillwayArgumentError('deadline', 'milliseconds from now (0 or more)', deadline);
    }
    const now = clock.now();
    return { expiresAt: now + deadline, readAt: now, deadlineSignal: undefined, signalled: false };
  }
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
  const s = deadline.signal instanceof AbortSignal ? deadline.signal : undefined;
  return { expiresAt: deadline.expiresAt, deadlineSignal: s, signalled: s !== undefined };
}

/**
 * The request's deadline, with its signal (which also aborts when the request's client leaves).
 * One on another clock is carried over as what is left of it, and timed here.
 */
function ambientDeadline(ambient: AmbientContext, clock: Clock): SettledDeadline {
  const s = ambient.signal;
  if ((ambient.clock ?? systemClock) === clock) {
    return { expiresAt: ambient.expiresAt, deadlineSignal: s, signalled: s !== undefined };
  }
  return { expiresAt: expiresAtOn(ambient, clock), deadlineSignal: s, signalled: false };
}
