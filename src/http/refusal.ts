/**
 * The decision → response table: every way Spillway refuses a request, its status, its
 * `Spillway-Retry` signal, and an `application/problem+json` body with a stable `type` per
 * reason. One place, so the node, Express and Fastify adapters answer identically.
 *
 * @module
 */
import type { RetrySignal } from '../index.js';
import { defaultHeaderNames, type HeaderNames } from './header-names.js';
import { retryAfterSeconds } from './codecs.js';
import { formatRateLimit, formatRateLimitPolicy } from './rate-limit-fields.js';

/** Why a request was refused. */
export type RefusalReason =
  /** The client's quota is spent (429). */
  | 'quota'
  /** The client ignored earlier 429s; an enforced, longer wait (429). */
  | 'penalty'
  /** The client kept ignoring them; a cool-off block (429). */
  | 'blocked'
  /** Every slot is taken and the line is full or too slow (503). */
  | 'capacity'
  /** Less critical work shed to keep room for more critical work (503). */
  | 'shed'
  /** The request's deadline is spent, or would be before it could start (503, never). */
  | 'deadline'
  /** The process itself is saturated (event loop) (503). */
  | 'overloaded'
  /** A dependency refused or is overloaded; its signal passed up (503). */
  | 'dependency'
  /** The shared limiter store cannot be reached and the policy is to refuse (503). */
  | 'unavailable';

/** A quota policy to describe in `RateLimit-Policy` / `RateLimit`. */
export interface QuotaInfo {
  readonly name: string;
  readonly ratePerSec: number;
  readonly burst: number;
  readonly remaining: number;
  readonly resetMs: number;
  /** `RateLimit-Policy` already formatted (it never changes for a limiter); built if absent. */
  readonly policyField?: string | undefined;
}

/** A refusal, before it is written. */
export interface Refusal {
  readonly reason: RefusalReason;
  /** What the caller should do; defaults per reason (see {@link refusalTable}). */
  readonly signal?: RetrySignal | undefined;
  /** When a retry could succeed; drives `Retry-After` for `later`. */
  readonly retryAfterMs?: number | undefined;
  /** The quota behind a 429, for the RateLimit fields. */
  readonly quota?: QuotaInfo | undefined;
  /** Occurrence-specific explanation; defaults per reason. */
  readonly detail?: string | undefined;
}

interface Row {
  readonly status: 429 | 503;
  readonly signal: RetrySignal;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
}

const iana = 'https://iana.org/assignments/http-problem-types#';
const own = 'urn:spillway:problem:';

/** Status, default signal, problem `type`, `title` and default `detail` per reason. */
export const refusalTable: Readonly<Record<RefusalReason, Row>> = Object.freeze({
  quota: {
    status: 429,
    signal: 'later',
    type: `${iana}quota-exceeded`,
    title: 'Quota exceeded',
    detail: 'This client has used its request quota; retry after the indicated time.',
  },
  penalty: {
    status: 429,
    signal: 'later',
    type: `${iana}abnormal-usage-detected`,
    title: 'Retry-After not honoured',
    detail:
      'This client kept retrying before its Retry-After elapsed; the wait is now enforced and longer.',
  },
  blocked: {
    status: 429,
    signal: 'later',
    type: `${own}client-blocked`,
    title: 'Client blocked for a cool-off period',
    detail: 'This client kept ignoring Retry-After; it is blocked until the cool-off period ends.',
  },
  capacity: {
    status: 503,
    signal: 'later',
    type: `${iana}temporary-reduced-capacity`,
    title: 'Server at capacity',
    detail:
      'Every slot is taken and the line is full; the request was refused before any work started.',
  },
  shed: {
    status: 503,
    signal: 'later',
    type: `${own}shed`,
    title: 'Shed by criticality',
    detail: 'Under load, less critical requests are refused first to keep room for critical ones.',
  },
  deadline: {
    status: 503,
    signal: 'never',
    type: `${own}deadline-exceeded`,
    title: 'Deadline exceeded',
    detail: "The request's deadline was spent before it could be served; retrying will not help.",
  },
  overloaded: {
    status: 503,
    signal: 'later',
    type: `${own}server-overloaded`,
    title: 'Server overloaded',
    detail: 'The server process is saturated; less critical work is refused until it recovers.',
  },
  dependency: {
    status: 503,
    signal: 'later',
    type: `${own}dependency-overloaded`,
    title: 'Dependency overloaded',
    detail: 'A service this request depends on refused it.',
  },
  unavailable: {
    status: 503,
    signal: 'elsewhere',
    type: `${own}limiter-unavailable`,
    title: 'Limiter store unavailable',
    detail:
      'The shared limiter store could not be reached and the policy is to refuse; try another replica.',
  },
});

/** What to write: status, a flat header list (`[name, value, name, value, …]`) and the body. */
export interface RefusalResponse {
  readonly status: 429 | 503;
  readonly signal: RetrySignal;
  readonly headers: string[];
  readonly body: string;
}

/**
 * Turns a refusal into a response. `later` carries `Retry-After` (whole seconds ≥ 1, rounded
 * up); `elsewhere` and `never` do not (retrying here soon is the wrong move). Quota refusals
 * carry `RateLimit-Policy` and `RateLimit`.
 */
export function refusalResponse(
  refusal: Refusal,
  names: HeaderNames = defaultHeaderNames,
): RefusalResponse {
  const row = refusalTable[refusal.reason];
  const signal = refusal.signal ?? row.signal;
  const parts =
    refusal.detail === undefined
      ? cachedParts(refusal.reason, signal)
      : bodyParts(row, signal, refusal.detail);
  let body: string;
  let headers: string[];
  if (signal === 'later') {
    const retryAfterMs = Math.max(1, Math.ceil(refusal.retryAfterMs ?? 1000));
    const ms = String(retryAfterMs);
    body = parts.head + ms + parts.tail;
    headers = [
      'content-type',
      'application/problem+json',
      'content-length',
      String(parts.bytes + ms.length),
      'cache-control',
      'no-store',
      names.retry,
      signal,
      'retry-after',
      String(retryAfterSeconds(retryAfterMs)),
    ];
  } else {
    body = parts.head + 'null' + parts.tail;
    headers = [
      'content-type',
      'application/problem+json',
      'content-length',
      String(parts.bytes + 4),
      'cache-control',
      'no-store',
      names.retry,
      signal,
    ];
  }
  const q = refusal.quota;
  if (q !== undefined) {
    headers.push(
      'ratelimit-policy',
      q.policyField ?? formatRateLimitPolicy(q.name, q),
      'ratelimit',
      formatRateLimit(q.name, q.remaining, q.resetMs),
    );
  }
  return { status: row.status, signal, headers, body };
}

/** A body split around its one varying field, `retryAfterMs`, with its byte length. */
interface BodyParts {
  readonly head: string;
  readonly tail: string;
  /** UTF-8 bytes of head + tail. */
  readonly bytes: number;
}

function bodyParts(row: Row, signal: RetrySignal, detail: string): BodyParts {
  const head =
    `{"type":"${row.type}","title":"${row.title}","status":${row.status},` +
    `"detail":${JSON.stringify(detail)},"retryAfterMs":`;
  const tail = `,"spillwayRetry":"${signal}"}`;
  return { head, tail, bytes: utf8Length(head) + utf8Length(tail) };
}

// Built once per reason and signal (at most 9 × 3 entries): refusals are the hot path.
const partsCache: Partial<Record<RefusalReason, Partial<Record<RetrySignal, BodyParts>>>> = {};

function cachedParts(reason: RefusalReason, signal: RetrySignal): BodyParts {
  const bySignal = (partsCache[reason] ??= {});
  let parts = bySignal[signal];
  if (parts === undefined) {
    const row = refusalTable[reason];
    parts = bodyParts(row, signal, row.detail);
    bySignal[signal] = parts;
  }
  return parts;
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}
