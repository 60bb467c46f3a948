/**
 * The status a failed call through `dependencyInterceptor` ends with, for the caller (and, when
 * the caller is a handler behind `grpcAdmission`, for its own caller in turn):
 * - the caller cancelled: `CANCELLED`, as grpc-js says it;
 * - the callee failed in an ordinary way: its own status, unchanged;
 * - an overload, the callee's or one refused here (the cap, the budget, the breaker, the
 *   throttle): the refusal `refusalFromError` reads from the Spillway error — `never` once a
 *   retry was made — as a status with `spillway-retry` and `grpc-retry-pushback-ms` trailers,
 *   under the callee's own code when it refused (`UNAVAILABLE`, `RESOURCE_EXHAUSTED`), else
 *   `UNAVAILABLE`; a spent deadline is `DEADLINE_EXCEEDED`;
 * - anything else: `UNKNOWN`, with the error's message.
 *
 * @module
 */
import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { refusalFromError, type HeaderNames } from '../http/index.js';
import { statusOfRefusal } from './status-of-refusal.js';
import { GrpcStatusError } from './status-signal.js';

/** The status ending a call that failed with `error`. */
export function statusOfFailure(error: unknown, names: HeaderNames): StatusObject {
  if (error instanceof GrpcStatusError) return error.grpcStatus;
  const refusal = refusalFromError(error);
  const detail = messageOf(error);
  if (refusal === undefined)
    return { code: status.UNKNOWN, details: detail, metadata: new Metadata() };
  const code =
    refusal.reason === 'deadline'
      ? status.DEADLINE_EXCEEDED
      : (refusedWith(error) ?? status.UNAVAILABLE);
  return statusOfRefusal({ ...refusal, detail }, names, code);
}

/** The callee's own refusal code, if a gRPC refusal is in the cause chain. */
function refusedWith(error: unknown): status | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    if (e instanceof GrpcStatusError) {
      return e.code === status.RESOURCE_EXHAUSTED || e.code === status.UNAVAILABLE
        ? e.code
        : undefined;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return 'Unknown error';
  }
}
