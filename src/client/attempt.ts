/**
 * A call and its attempts, as records the client fills in as they go, and the verdict an
 * attempt ends with: what its ending says about the dependency (`attempt-end.ts` tells the
 * parts every caller shares).
 *
 * @module
 */
import {
  classifyError,
  DeadlineExceededError,
  DependencyTimeoutError,
  isLocalRefusal,
  systemClock,
} from '../index.js';
import { AttemptScope } from './attempt-scope.js';
import type { HeaderNames } from '../http/index.js';
import { propagationHeaders } from './propagation.js';
import type { Settings } from './settings.js';
import type { Attempt, CallState, Verdict } from './records.js';

/** The scope of an attempt nothing bounds: no signal, no timer, nothing to dispose. */
export const unboundedScope = new AttemptScope({
  clock: systemClock,
  callerSignal: undefined,
  timerMs: Infinity,
  reason: () => undefined,
});

/** A call's attempt `number`, before it has taken anything. */
export function newAttempt<T>(call: CallState<T>, number: number): Attempt<T> {
  return {
    call,
    number,
    ticket: undefined,
    generation: -1,
    permit: undefined,
    slot: false,
    scope: unboundedScope,
    remainingMs: undefined,
  };
}

/**
 * Gives an attempt about to start its time bound (the deadline's `deadlineMs` left, or
 * `timeoutMs` if shorter) and its abort wiring. Its propagation fields follow from that bound
 * (`attemptHeaders`), built only when the work asks for them.
 */
export function armAttempt(attempt: Attempt<unknown>, deadlineMs: number, s: Settings): void {
  const call = attempt.call;
  const timeoutFirst = s.timeoutMs < deadlineMs;
  const remainingMs = timeoutFirst ? s.timeoutMs : deadlineMs === Infinity ? undefined : deadlineMs;
  // A Deadline's own signal already aborts at expiresAt: a timer is needed only for timeoutMs.
  const timerMs = timeoutFirst || !call.deadlineSignalled ? (remainingMs ?? Infinity) : Infinity;
  // Nothing bounds the attempt (no deadline, timeout or caller signal): nothing to wire.
  attempt.scope =
    timerMs === Infinity && call.signal === undefined
      ? unboundedScope
      : new AttemptScope({
          clock: s.clock,
          callerSignal: call.signal,
          timerMs,
          reason: () =>
            timeoutFirst
              ? new DependencyTimeoutError({
                  timeoutMs: s.timeoutMs,
                  dependency: s.name,
                  attempts: attempt.number,
                })
              : new DeadlineExceededError(),
        });
  attempt.remainingMs = remainingMs;
}

/**
 * The propagation fields an armed attempt sends: built when asked for (a fetch always asks; a
 * `call` whose function never reads `headers` builds none).
 */
export function attemptHeaders(
  attempt: Attempt<unknown>,
  names: HeaderNames,
): Readonly<Record<string, string>> {
  return propagationHeaders({
    names,
    remainingMs: attempt.remainingMs,
    criticality: attempt.call.criticality,
    attempt: attempt.number,
  });
}

/** What a failed attempt's error says about the dependency, and the error to raise. */
export function judge(attempt: Attempt<unknown>, error: unknown): [unknown, Verdict] {
  const fired = attempt.scope.fired;
  if (fired !== undefined) {
    // Its own `timeoutMs` says the dependency was too slow; the caller's deadline, which the
    // caller chose (a remote client, even), says nothing about it.
    return [fired, fired instanceof DependencyTimeoutError ? 'failed' : 'caller'];
  }
  const callerSignal = attempt.call.signal;
  // The caller gave up (its signal, or its deadline's): nothing to say about the dependency.
  if (callerSignal?.aborted === true) return [callerSignal.reason, 'caller'];
  if (isLocalRefusal(error)) return [error, 'local'];
  // An ordinary error (the dependency answered, badly), or an overload signal.
  return [error, classifyError(error) === undefined ? 'error' : 'failed'];
}
