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

/**
 * What to write: status, a flat header list (`[name, value, name, value, …]`) and the body.
 * Treat one as a value: to change a response, build another.
 */
export interface RefusalResponse {
  readonly status: 429 | 503;
  readonly signal: RetrySignal;
  readonly headers: string[];
  /** Always ASCII when built by {@link refusalResponse} (anything else is escaped). */
  readonly body: string;
}

/**
 * A response built by {@link refusalResponse}. Besides the public fields it keeps every field
 * but `Content-Length` as ready-to-send `name: value\r\n` lines, checked when built, so an
 * adapter can put them on the wire without checking each field again (see
 * `spillway/node`'s `writeRefusal`, where that check is a large part of a refusal's cost).
 */
class BuiltRefusal implements RefusalResponse {
  readonly status: 429 | 503;
  readonly signal: RetrySignal;
  readonly headers: string[];
  readonly body: string;
  readonly #lines: string | undefined;
  readonly #count: number;

  constructor(fields: RefusalResponse, lines: string | undefined) {
    this.status = fields.status;
    this.signal = fields.signal;
    this.headers = fields.headers;
    this.body = fields.body;
    this.#lines = lines;
    this.#count = fields.headers.length;
  }

  static linesOf(this: void, response: RefusalResponse): string | undefined {
    // A response with fields added since it was built is no longer described by its lines.
    return #lines in response && response.headers.length === response.#count
      ? response.#lines
      : undefined;
  }
}

/**
 * Every field of `response` but `Content-Length`, as header lines ready to send, checked when
 * built; `undefined` unless `response` came from {@link refusalResponse} unchanged (then write
 * it field by field). Internal to the adapters.
 */
export const headerLinesOf: (response: RefusalResponse) => string | undefined =
  BuiltRefusal.linesOf;

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
  let lines = fixedLines(names.retry, signal);
  const q = refusal.quota;
  let policy: string | undefined;
  let now: string | undefined;
  if (q !== undefined) {
    policy = q.policyField ?? formatRateLimitPolicy(q.name, q);
    now = formatRateLimit(q.name, q.remaining, q.resetMs);
  }
  // `retryAfterMs` in the body, and `Retry-After`, only when retrying here later makes sense.
  let value = 'null';
  let retryAfter: string | undefined;
  if (signal === 'later') {
    const retryAfterMs = Math.max(1, Math.ceil(refusal.retryAfterMs ?? 1000));
    const seconds = retryAfterField(retryAfterMs);
    value = String(retryAfterMs);
    retryAfter = seconds.value;
    if (lines !== undefined) lines += seconds.line;
  }
  const body = parts.head + value + parts.tail;
  const length = String(parts.bytes + value.length);
  const headers = fieldList({ length, retryName: names.retry, signal, retryAfter, policy, now });
  if (policy !== undefined && lines !== undefined) {
    // A policy field passed in was formatted elsewhere: check it before trusting it as a line.
    const more = rateLimitLines(policy, now!, q!.policyField !== undefined);
    lines = more === undefined ? undefined : lines + more;
  }
  return new BuiltRefusal({ status: row.status, signal, headers, body }, lines);
}

/** The fields as a flat list, each built whole: growing an array to add fields costs a copy. */
function fieldList(f: {
  readonly length: string;
  readonly retryName: string;
  readonly signal: RetrySignal;
  readonly retryAfter: string | undefined;
  readonly policy: string | undefined;
  readonly now: string | undefined;
}): string[] {
  const { length, retryName, signal, retryAfter, policy, now } = f;
  const type = 'application/problem+json';
  if (retryAfter === undefined) {
    return policy === undefined
      ? ['content-type', type, 'content-length', length, retryName, signal]
      : [
          'content-type',
          type,
          'content-length',
          length,
          retryName,
          signal,
          'ratelimit-policy',
          policy,
          'ratelimit',
          now!,
        ];
  }
  return policy === undefined
    ? ['content-type', type, 'content-length', length, retryName, signal, 'retry-after', retryAfter]
    : [
        'content-type',
        type,
        'content-length',
        length,
        retryName,
        signal,
        'retry-after',
        retryAfter,
        'ratelimit-policy',
        policy,
        'ratelimit',
        now!,
      ];
}

/** `Retry-After` for a wait, as a value and as a line; the last one is kept (seconds repeat). */
interface RetryAfterField {
  readonly seconds: number;
  readonly value: string;
  readonly line: string;
}

let lastRetryAfter: RetryAfterField = { seconds: 1, value: '1', line: 'retry-after: 1\r\n' };

function retryAfterField(retryAfterMs: number): RetryAfterField {
  const seconds = retryAfterSeconds(retryAfterMs);
  if (seconds !== lastRetryAfter.seconds) {
    const value = String(seconds);
    lastRetryAfter = { seconds, value, line: 'retry-after: ' + value + '\r\n' };
  }
  return lastRetryAfter;
}

// The RateLimit fields as lines, for the last policy and state seen: a client refused again and
// again gets the same two fields until a second passes, so they are joined once, not per refusal.
let lastPolicy: string | undefined;
let lastNow: string | undefined;
let lastLines: string | undefined;
// The last policy field passed in that passed the check: a route passes the same one every time,
// so it is checked once, not each second as `RateLimit` changes.
let checkedPolicy: string | undefined;

/** `RateLimit-Policy` and `RateLimit` as lines; `undefined` if `policy` needs a check it fails. */
function rateLimitLines(policy: string, now: string, check: boolean): string | undefined {
  if (check && policy !== checkedPolicy) {
    if (!isFieldValue(policy)) return undefined;
    checkedPolicy = policy;
  }
  if (policy !== lastPolicy || now !== lastNow) {
    lastPolicy = policy;
    lastNow = now;
    lastLines = 'ratelimit-policy: ' + policy + '\r\nratelimit: ' + now + '\r\n';
  }
  return lastLines;
}

// `Content-Type` and `Spillway-Retry` as lines, per name of the signal field and signal. Bounded:
// a deployment uses one or two names; past the bound, lines are built on every call.
const fixedByName = new Map<string, Partial<Record<RetrySignal, string | undefined>>>();
const maxFixedNames = 16;

/** The two fields every refusal has, as lines; `undefined` if the configured name is not a token. */
function fixedLines(retryName: string, signal: RetrySignal): string | undefined {
  // A signal from untyped code that is none of the three is written field by field, as is.
  if (signal !== 'later' && signal !== 'elsewhere' && signal !== 'never') return undefined;
  let bySignal = fixedByName.get(retryName);
  if (bySignal === undefined) {
    bySignal = {};
    if (fixedByName.size < maxFixedNames) fixedByName.set(retryName, bySignal);
  }
  if (!(signal in bySignal)) {
    bySignal[signal] =
      fieldName.test(retryName) && !managedByServer.test(retryName)
        ? `content-type: application/problem+json\r\n${retryName}: ${signal}\r\n`
        : undefined;
  }
  return bySignal[signal];
}

/** An HTTP field name (RFC 9110 token). */
const fieldName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Fields an HTTP server writes or frames by itself: never passed as ready lines. */
const managedByServer =
  /^(?:content-length|connection|transfer-encoding|keep-alive|date|trailer|upgrade)$/i;

/** Visible ASCII and spaces only: a value that can go on the wire as is. */
function isFieldValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
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
    `"detail":${asciiJson(detail)},"retryAfterMs":`;
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

/** JSON for a string, with every non-ASCII character escaped, so a body is always ASCII. */
function asciiJson(text: string): string {
  return JSON.stringify(text).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}
