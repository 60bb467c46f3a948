/**
 * The two ways a call may end other than with the dependency's error, both off by default: an
 * answer held back for a retry (`retryOn`) that no retry replaced, and a fallback standing in
 * for a failure the user chose. Their options, checked once at construction, and the steps a
 * failed call's end goes through when they are set. Neither ever stands in for the caller's
 * own doing: its malformed request, its abort, its spent deadline.
 *
 * @module
 */
import { DeadlineExceededError, isSpillwayError, SpillwayConfigError } from '../index.js';
import type { CallState } from './records.js';
import type { DependencyFallback, FallbackCode } from './types.js';

/** The codes `fallback.on` may name. */
const fallbackCodes: ReadonlySet<FallbackCode> = new Set<FallbackCode>([
  'SPILLWAY_E_OVERLOADED',
  'SPILLWAY_E_RETRY_BUDGET',
  'SPILLWAY_E_CIRCUIT_OPEN',
  'SPILLWAY_E_THROTTLED',
  'SPILLWAY_E_DEPENDENCY_TIMEOUT',
  'SPILLWAY_E_UNREACHABLE',
  'SPILLWAY_E_QUEUE_FULL',
  'SPILLWAY_E_QUEUE_TIMEOUT',
  'SPILLWAY_E_SHED',
  'SPILLWAY_E_RATE_LIMITED',
  'SPILLWAY_E_WAIT_LINE_FULL',
]);

/** Most statuses `retryOn` may list. */
const maxRetryOn = 16;

/** A dependency's fallback, settled. */
export interface FallbackSettings {
  /** Whether a failure (already known not to be the caller's own) falls back. */
  readonly on: (error: unknown) => boolean;
  /** `fetch`'s answer, if the dependency gives one. */
  readonly value: ((error: unknown) => Response | PromiseLike<Response>) | undefined;
}

/** The `fallback` option, checked; throws `SpillwayConfigError` naming what is wrong. */
export function fallbackOf(option: DependencyFallback | undefined): FallbackSettings | undefined {
  if (option === undefined) return undefined;
  if (typeof option !== 'object' || option === null) {
    throw new SpillwayConfigError('fallback', 'an object with `on` (and `value`)', option);
  }
  const { on, value } = option;
  if (value !== undefined && typeof value !== 'function') {
    throw new SpillwayConfigError('fallback.value', 'a function of the error', value);
  }
  if (typeof on === 'function') return { on, value };
  const codes: readonly unknown[] | undefined = Array.isArray(on) ? on : undefined;
  if (
    codes === undefined ||
    codes.length === 0 ||
    codes.some((c) => !fallbackCodes.has(c as FallbackCode))
  ) {
    throw new SpillwayConfigError(
      'fallback.on',
      `a predicate, or a non-empty list of ${[...fallbackCodes].join(', ')}`,
      on,
    );
  }
  const chosen = new Set(codes);
  // A failure retried, or a retry refused, ends with an error of its own whose cause is the
  // last attempt's: `on: ['SPILLWAY_E_UNREACHABLE']` still means an unreachable dependency.
  const named = (e: unknown): boolean => isSpillwayError(e) && chosen.has(e.code);
  return { on: (error) => named(error) || named((error as { cause?: unknown }).cause), value };
}

/** The `retryOn` option, checked: `undefined` when no status is listed. */
export function retryOnOf(option: unknown, maxAttempts: number): ReadonlySet<number> | undefined {
  if (option === undefined) return undefined;
  if (
    !Array.isArray(option) ||
    option.length > maxRetryOn ||
    option.some((s) => !Number.isInteger(s) || (s as number) < 400 || (s as number) > 599)
  ) {
    throw new SpillwayConfigError(
      'retryOn',
      `a list of at most ${maxRetryOn} HTTP statuses from 400 to 599`,
      option,
    );
  }
  if (option.length === 0) return undefined;
  if (maxAttempts === 1) {
    throw new SpillwayConfigError('retryOn', 'given only when retries are allowed', option);
  }
  return new Set(option as number[]);
}

/**
 * A failed call's end when its work may hold back an answer for a retry: that answer, if one
 * is held (no retry replaced it: retries ran out, or the budget, the throttle, the breaker, the
 * cap or the deadline allowed none), unless the caller gave up; the error otherwise.
 */
export function heldOr<T>(call: CallState<T>, error: unknown): T {
  const held = call.work.takeHeld?.();
  if (held === undefined || call.signal?.aborted === true) throw error;
  return held;
}

/**
 * A failed call's end with a fallback: its answer when `on` chooses the failure, the error as
 * it is when not, or when the failure was the caller's own (its last attempt ended so), it
 * gave up, or its deadline is spent (nobody is left to answer).
 */
export function fallBack<T>(
  call: CallState<T>,
  error: unknown,
  on: (error: unknown) => boolean,
): T | PromiseLike<T> {
  if (
    call.lastVerdict === 'caller' ||
    call.signal?.aborted === true ||
    error instanceof DeadlineExceededError ||
    !on(error)
  ) {
    throw error;
  }
  return call.fallback!(error);
}
