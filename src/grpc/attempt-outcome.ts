/**
 * What one attempt's status says, for the dependency's records (`dependency.call` reads a
 * resolved attempt as an answer and a rejected one by its error):
 *
 * | status | the attempt | breaker | budget | retried |
 * |---|---|---|---|---|
 * | `OK`, and answers such as `NOT_FOUND`, `INVALID_ARGUMENT`, `ABORTED`… | answered (resolves) | success | – | no |
 * | `UNAVAILABLE`, `RESOURCE_EXHAUSTED` | refused: `DependencyOverloadedError` with the trailers' signal | failure | failure | if idempotent and the signal allows |
 * | `DEADLINE_EXCEEDED` with a Spillway signal | refused (the callee's deadline was spent): `never` | failure | failure | no |
 * | `DEADLINE_EXCEEDED` without | the caller's deadline: `DeadlineExceededError` | – | – | no |
 * | `UNKNOWN`, `INTERNAL`, `DATA_LOSS` | failed: `GrpcStatusError` | failure | – | no |
 *
 * @module
 */
import { status, type Metadata, type StatusObject } from '@grpc/grpc-js';
import { DeadlineExceededError, DependencyOverloadedError } from '../index.js';
import type { HeaderNames } from '../http/index.js';
import { failureCodes, GrpcStatusError, overloadOfStatus } from './status-signal.js';

/** An attempt's answer: what the callee sent, to hand to the caller as it is. */
export interface GrpcAnswer {
  readonly headers: Metadata | undefined;
  readonly message: unknown;
  readonly status: StatusObject;
}

/** The answer to resolve the attempt with, or the error to reject it with. */
export function attemptOutcome(
  answer: GrpcAnswer,
  p: { readonly names: HeaderNames; readonly dependency: string },
): { readonly ok: true } | { readonly ok: false; readonly error: Error } {
  const s = answer.status;
  if (s.code === status.OK) return answered;
  const overload = overloadOfStatus(s, p.names);
  if (overload !== undefined) {
    const error = new DependencyOverloadedError(
      `${p.dependency} refused the call (${s.code} ${status[s.code]}: ${s.details})`,
      {
        signal: overload.signal,
        retryAfterMs: overload.retryAfterMs,
        dependency: p.dependency,
        cause: new GrpcStatusError(s),
      },
    );
    return { ok: false, error };
  }
  if (s.code === status.DEADLINE_EXCEEDED) {
    return { ok: false, error: new DeadlineExceededError({ cause: new GrpcStatusError(s) }) };
  }
  if (failureCodes.has(s.code)) return { ok: false, error: new GrpcStatusError(s) };
  return answered;
}

const answered = Object.freeze({ ok: true as const });
