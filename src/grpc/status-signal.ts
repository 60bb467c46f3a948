/**
 * What a gRPC status says about retrying, read in one place for both sides: the client reads a
 * callee's status to decide what its attempt was (an answer, an ordinary failure, or a refusal
 * with a signal), and the server guard reads the status error a handler threw (a dependency's,
 * through a grpc-js client) to pass the dependency's overload up with the right signal.
 *
 * The signal comes from the trailers: `grpc-retry-pushback-ms` (gRFC A6: a wait in ms; a
 * negative or unparseable value means do not retry) and `spillway-retry`. Without them,
 * `RESOURCE_EXHAUSTED` means `later`, and `UNAVAILABLE` `elsewhere` for the client (another
 * replica may do) and `later` for the guard (as a bare 503 from an HTTP dependency is).
 *
 * @module
 */
import { status, type Metadata, type StatusObject } from '@grpc/grpc-js';
import type { RetrySignal } from '../index.js';
import { parseRetrySignal, type HeaderNames, type Refusal } from '../http/index.js';
import { pushbackTrailer } from './status-of-refusal.js';

/** What a status's trailers advise. */
export interface TrailerSignal {
  readonly signal: RetrySignal | undefined;
  /** A non-negative pushback, in ms. */
  readonly retryAfterMs: number | undefined;
}

const int32 = /^-?\d{1,10}$/;
const none: TrailerSignal = Object.freeze({ signal: undefined, retryAfterMs: undefined });

/** The advice in `metadata`: a pushback that says stop wins over any other signal. */
export function trailerSignal(
  metadata: Metadata | null | undefined,
  names: HeaderNames,
): TrailerSignal {
  if (metadata === null || metadata === undefined || typeof metadata.get !== 'function') {
    return none;
  }
  const signal = parseRetrySignal(textValues(metadata.get(names.retry)));
  const pushback = metadata.get(pushbackTrailer);
  if (pushback.length === 0)
    return signal === undefined ? none : { signal, retryAfterMs: undefined };
  const raw = pushback.length === 1 && typeof pushback[0] === 'string' ? pushback[0] : '';
  const ms = int32.test(raw) ? Number(raw) : -1;
  if (ms < 0 || ms > 2_147_483_647) return { signal: 'never', retryAfterMs: undefined };
  return { signal: signal ?? 'later', retryAfterMs: ms };
}

function textValues(values: readonly unknown[]): string | string[] | undefined {
  if (values.length === 0) return undefined;
  return values.map((v) => (typeof v === 'string' ? v : ''));
}

/**
 * A non-OK status as an error: the shape grpc-js gives a failed call's callback (a
 * `ServiceError`: `code`, `details`, `metadata`), so code that handles those handles this.
 */
export class GrpcStatusError extends Error {
  readonly code: status;
  readonly details: string;
  readonly metadata: Metadata;

  constructor(s: StatusObject) {
    super(`${s.code} ${status[s.code] ?? 'UNKNOWN'}: ${s.details}`);
    this.code = s.code;
    this.details = s.details;
    this.metadata = s.metadata;
  }

  override get name(): string {
    return 'GrpcStatusError';
  }

  /** The status it stands for (not `status`: that name means an HTTP status to other code). */
  get grpcStatus(): StatusObject {
    return { code: this.code, details: this.details, metadata: this.metadata };
  }
}

/** An object shaped like a failed call's error: an integer `code`, maybe `metadata`. */
interface StatusLike {
  readonly code: status;
  readonly metadata?: Metadata | null;
}

function isStatusLike(value: unknown): value is StatusLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    Number.isInteger((value as { code?: unknown }).code)
  );
}

/**
 * The refusal a handler's failure stands for when it is a gRPC status error (a dependency's
 * `ServiceError`): `UNAVAILABLE` and `RESOURCE_EXHAUSTED` pass the dependency's signal up (its
 * trailers', else `later`), `DEADLINE_EXCEEDED` is a spent deadline. Undefined otherwise; never
 * throws.
 */
export function refusalOfStatusError(error: unknown, names: HeaderNames): Refusal | undefined {
  try {
    if (!isStatusLike(error)) return undefined;
    if (error.code === status.DEADLINE_EXCEEDED) return spentDeadline;
    if (error.code !== status.UNAVAILABLE && error.code !== status.RESOURCE_EXHAUSTED) {
      return undefined;
    }
    const advice = trailerSignal(error.metadata, names);
    return {
      reason: 'dependency',
      signal: advice.signal ?? 'later',
      retryAfterMs: advice.retryAfterMs,
    };
  } catch {
    // A value whose fields throw when read is an ordinary failure.
    return undefined;
  }
}

const spentDeadline: Refusal = Object.freeze({ reason: 'deadline' });

/**
 * For the client: the overload a callee's status says, or undefined when the status is not a
 * refusal (an answer, or an ordinary failure).
 */
export function overloadOfStatus(
  s: StatusObject,
  names: HeaderNames,
): { readonly signal: RetrySignal; readonly retryAfterMs: number | undefined } | undefined {
  if (s.code === status.RESOURCE_EXHAUSTED || s.code === status.UNAVAILABLE) {
    const advice = trailerSignal(s.metadata, names);
    if (advice.signal !== undefined)
      return { signal: advice.signal, retryAfterMs: advice.retryAfterMs };
    return {
      signal: s.code === status.RESOURCE_EXHAUSTED ? 'later' : 'elsewhere',
      retryAfterMs: undefined,
    };
  }
  if (s.code === status.DEADLINE_EXCEEDED) {
    // The callee's own refusal (it says so in its trailers): its deadline was spent.
    const advice = trailerSignal(s.metadata, names);
    return advice.signal === undefined ? undefined : { signal: 'never', retryAfterMs: undefined };
  }
  return undefined;
}

/** Codes that say the callee failed (a bug, lost data), not that it answered: breaker failures. */
export const failureCodes: ReadonlySet<status> = new Set([
  status.UNKNOWN,
  status.INTERNAL,
  status.DATA_LOSS,
]);
