/**
 * A refusal as a gRPC status: the code for its reason, and trailers that say what to do next —
 * `grpc-retry-pushback-ms` (gRFC A6: the wait in ms for `later`, `-1` for `never`, absent for
 * `elsewhere`, which leaves the wait to the caller's backoff), `spillway-retry` with the signal
 * itself, and for a quota the `ratelimit-policy` / `ratelimit` fields. The fields come from the
 * HTTP refusal table (`refusalResponse`), so both transports say the same thing.
 *
 * @module
 */
import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import {
  refusalResponse,
  refusalTable,
  type HeaderNames,
  type Refusal,
  type RefusalReason,
} from '../http/index.js';
import { statedWaitMs } from '../http/refusal-response.js';

/** The trailer gRPC clients read for a server's retry advice (gRFC A6). */
export const pushbackTrailer = 'grpc-retry-pushback-ms';

/** The largest pushback the trailer can carry: it is an int32. */
const maxPushbackMs = 2_147_483_647;

/** Fields of an HTTP refusal that mean nothing on a gRPC status. */
const httpOnly: ReadonlySet<string> = new Set(['content-type', 'content-length', 'retry-after']);

/** The gRPC code for each refusal reason. */
export const codeOfReason: Readonly<Record<RefusalReason, status>> = Object.freeze({
  quota: status.RESOURCE_EXHAUSTED,
  penalty: status.RESOURCE_EXHAUSTED,
  blocked: status.RESOURCE_EXHAUSTED,
  suspended: status.RESOURCE_EXHAUSTED,
  capacity: status.UNAVAILABLE,
  shed: status.UNAVAILABLE,
  overloaded: status.UNAVAILABLE,
  dependency: status.UNAVAILABLE,
  unavailable: status.UNAVAILABLE,
  deadline: status.DEADLINE_EXCEEDED,
  failure: status.INTERNAL,
});

/**
 * The status answering a call with `refusal`. `code` overrides the reason's (a dependency's own
 * code passed on, say). The details are the refusal's detail, or its reason's.
 */
export function statusOfRefusal(
  refusal: Refusal,
  names: HeaderNames,
  code: status = codeOfReason[refusal.reason],
): StatusObject {
  const response = refusalResponse(refusal, names);
  const metadata = new Metadata();
  const fields = response.headers;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!;
    if (!httpOnly.has(name)) metadata.set(name, fields[i + 1]!);
  }
  const signal = response.signal;
  if (signal === 'never') metadata.set(pushbackTrailer, '-1');
  else if (signal === 'later') {
    // The wait `refusalResponse` states in the body, here in ms: 1 s when none is known.
    metadata.set(
      pushbackTrailer,
      String(Math.min(statedWaitMs(refusal.retryAfterMs), maxPushbackMs)),
    );
  }
  return { code, details: refusal.detail ?? refusalTable[refusal.reason].detail, metadata };
}
