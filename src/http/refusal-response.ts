/**
 * Turns a refusal into the response an adapter writes: status, fields and problem+json body,
 * from the reason's row in the refusal table. Building the strings is most of a refusal's own
 * cost, so they are cached, and kept as checked header lines an adapter can splice into a head
 * (`spillway/node`'s `writeRefusal`).
 *
 * @module
 */
import type { RetrySignal } from '../index.js';
import { retryAfterSeconds } from './codecs.js';
import { defaultHeaderNames, type HeaderNames } from './header-names.js';
import { fixedLines, rateLimitLines, retryAfterField } from './header-lines.js';
import {
  formatRateLimit,
  formatRateLimitPolicy,
  isFieldText,
  violatedMember,
  violatedMemberOf,
} from './rate-limit-fields.js';
import { refusalTable, type Refusal, type RefusalReason, type RefusalRow } from './refusal.js';

/**
 * What to write: status, a flat header list (`[name, value, name, value, …]`) and the body.
 * Treat one as a value: to change a response, build another.
 */
export interface RefusalResponse {
  readonly status: 429 | 500 | 503;
  /** `Spillway-Retry`; undefined for an answer without retry advice (the 500). */
  readonly signal: RetrySignal | undefined;
  readonly headers: string[];
  /** Always ASCII when built by {@link refusalResponse} (anything else is escaped). */
  readonly body: string;
}

/**
 * A response's strings and what they were built from. Building them is most of a refusal's own
 * cost, and under overload refusals come in runs with the same reason, wait and quota fields
 * (the stated wait is in whole ms, or whole seconds from 10 s, and a refused client's fields
 * change once a second), so the last set built for each reason is kept and reused while all of
 * these stay the same. One set per reason, not one in all: refusals of different reasons
 * interleave (an escalated client's `blocked` between polite clients' `quota`, a `capacity` 503
 * among 429s), and with a single set each change of reason rebuilt the strings of the next
 * refusal.
 */
interface Strings {
  readonly reason: RefusalReason;
  readonly signal: RetrySignal | undefined;
  /** The stated wait (`statedWaitMs`) for `later`, else undefined. */
  readonly retryAfterMs: number | undefined;
  readonly retryName: string;
  readonly policy: string | undefined;
  readonly now: string | undefined;
  /** The body's `,"violated-policies":[…]` member, or `''`. */
  readonly violated: string;
  readonly status: 429 | 500 | 503;
  /** `Content-Length`. */
  readonly length: string;
  readonly retryAfter: string | undefined;
  readonly body: string;
  /**
   * Every field but `Content-Length` as `name: value\r\n` lines, checked; else undefined (and
   * for the 500, which is rare and written field by field).
   */
  readonly lines: string | undefined;
  /** `lines`, the blank line and the body, joined when first asked for. */
  tail: string | undefined;
}

/** The last strings built, by reason (a handful of reasons: bounded). */
const lastStrings: Partial<Record<RefusalReason, Strings>> = {};

/** What an adapter splices into a head it has from its server: see {@link readyRefusalOf}. */
export interface ReadyRefusal {
  /** The value of `Content-Length`. */
  readonly length: string;
  /** Every other field as checked header lines, then the blank line, then the body. */
  readonly tail: string;
}

/**
 * A response built by {@link refusalResponse}. Besides the public fields it keeps its strings,
 * with every field but `Content-Length` as ready-to-send lines checked when built, so an adapter
 * can put them on the wire without checking each field again (see `spillway/node`'s
 * `writeRefusal`, where that check is a large part of a refusal's cost).
 */
class BuiltRefusal implements RefusalResponse {
  readonly status: 429 | 500 | 503;
  readonly signal: RetrySignal | undefined;
  readonly headers: string[];
  readonly body: string;
  readonly #strings: Strings;
  readonly #count: number;

  constructor(strings: Strings) {
    this.status = strings.status;
    this.signal = strings.signal;
    // Its own list, every time: a caller may add fields to the response it was given.
    this.headers = fieldList(strings);
    this.body = strings.body;
    this.#strings = strings;
    this.#count = this.headers.length;
  }

  static readyOf(this: void, response: RefusalResponse): ReadyRefusal | undefined {
    // A response changed since it was built is no longer described by its strings.
    if (!(#strings in response) || response.headers.length !== response.#count) return undefined;
    const s = response.#strings;
    if (s.lines === undefined || response.body !== s.body) return undefined;
    s.tail ??= s.lines + '\r\n' + s.body;
    return s as ReadyRefusal;
  }
}

/**
 * Every field of `response` but `Content-Length` as header lines checked when built, then the
 * blank line and the body; `undefined` unless `response` came from {@link refusalResponse}
 * unchanged (then write it field by field). Internal to the adapters.
 */
export const readyRefusalOf: (response: RefusalResponse) => ReadyRefusal | undefined =
  BuiltRefusal.readyOf;

/**
 * Turns a refusal into a response. `later` carries `Retry-After` (whole seconds ≥ 1, rounded
 * up); `elsewhere` and `never` do not (retrying here soon is the wrong move). Quota refusals
 * carry `RateLimit-Policy` and `RateLimit`, and name the policies that refused in the body's
 * `violated-policies` (draft-10).
 */
export function refusalResponse(
  refusal: Refusal,
  names: HeaderNames = defaultHeaderNames,
): RefusalResponse {
  const reason = refusal.reason;
  const signal = refusal.signal ?? refusalTable[reason].signal;
  const q = refusal.quota;
  let policy: string | undefined;
  let now: string | undefined;
  let violated = '';
  if (q !== undefined) {
    if ('violated' in q) {
      policy = q.policy;
      now = policy === undefined ? undefined : (q.now ?? '');
      violated = violatedMemberOf(q.violated);
    } else {
      policy = q.policyField ?? formatRateLimitPolicy(q.name, q);
      now = formatRateLimit(q.name, q.remaining, q.resetMs);
      violated = violatedMember(q.name);
    }
  }
  // `retryAfterMs` in the body, and `Retry-After`, only when retrying here later makes sense.
  const retryAfterMs = signal === 'later' ? statedWaitMs(refusal.retryAfterMs) : undefined;
  let s = lastStrings[reason];
  if (
    s === undefined ||
    refusal.detail !== undefined ||
    s.signal !== signal ||
    s.retryAfterMs !== retryAfterMs ||
    s.retryName !== names.retry ||
    s.policy !== policy ||
    s.now !== now ||
    s.violated !== violated
  ) {
    s = buildStrings(
      { reason, signal, retryAfterMs, retryName: names.retry, policy, now, violated },
      refusal,
    );
    if (refusal.detail === undefined) lastStrings[reason] = s;
  }
  return new BuiltRefusal(s);
}

/** Waits from here up are stated in whole seconds. */
const wholeSecondsFromMs = 10_000;

/**
 * The wait a refusal states (the body's `retryAfterMs`, and gRPC's pushback), from the wait the
 * refusal was decided with (1 s when none is known): whole ms, at least 1, rounded up; from 10 s
 * up, whole seconds, rounded up as `Retry-After` is. A client told a wait never comes back
 * before it is due (the penalty box counts an early return as a violation), and a wait of a
 * penalty step or a long quota window is no more useful to the ms: stated in seconds, the
 * response stays the same for a second, and is built once a second, not once a ms, for a client
 * refused again and again.
 */
export function statedWaitMs(retryAfterMs: number | undefined): number {
  const ms = Math.ceil(retryAfterMs ?? 1000);
  if (!(ms >= 1)) return 1;
  return ms < wholeSecondsFromMs ? ms : retryAfterSeconds(ms) * 1000;
}

/** The strings for `key`; `refusal` for its detail and whether its policy field needs a check. */
function buildStrings(
  key: Pick<
    Strings,
    'reason' | 'signal' | 'retryAfterMs' | 'retryName' | 'policy' | 'now' | 'violated'
  >,
  refusal: Refusal,
): Strings {
  const { reason, signal, retryAfterMs, retryName, policy, now, violated } = key;
  const row = refusalTable[reason];
  const parts =
    refusal.detail === undefined
      ? cachedParts(reason, signal)
      : bodyParts(row, signal, refusal.detail);
  let lines = signal === undefined ? undefined : fixedLines(retryName, signal);
  // The body's one varying field, `retryAfterMs`: absent from an answer without retry advice.
  let value = signal === undefined ? '' : 'null';
  let retryAfter: string | undefined;
  if (retryAfterMs !== undefined) {
    const seconds = retryAfterField(retryAfterMs);
    value = String(retryAfterMs);
    retryAfter = seconds.value;
    if (lines !== undefined) lines += seconds.line;
  }
  if (policy !== undefined && lines !== undefined) {
    // Fields passed in were formatted elsewhere: check them before trusting them as lines.
    const q = refusal.quota!;
    const given = 'violated' in q;
    const more =
      given && !isFieldText(now!)
        ? undefined
        : rateLimitLines(policy, now!, given || q.policyField !== undefined);
    lines = more === undefined ? undefined : lines + more;
  }
  // `violated-policies` goes last; a body without retry advice (the 500) has no quota.
  const tail =
    violated === '' || signal === undefined ? parts.tail : parts.tail.slice(0, -1) + violated + '}';
  // One literal naming every field: `{ ...key, status, … }` here made V8 build a new hidden
  // class per call (map migrations and a full GC every few thousand refusals: 2.7 × the cost).
  return {
    reason,
    signal,
    retryAfterMs,
    retryName,
    policy,
    now,
    violated,
    status: row.status,
    // `violated` is ASCII (names are printable ASCII, JSON-escaped): one byte per character.
    length: String(parts.bytes + value.length + tail.length - parts.tail.length),
    retryAfter,
    body: parts.head + value + tail,
    lines,
    tail: undefined,
  };
}

/** The fields as a flat list, each built whole: growing an array to add fields costs a copy. */
function fieldList(s: Strings): string[] {
  const { length, retryName, signal, retryAfter, policy, now } = s;
  const type = 'application/problem+json';
  if (signal === undefined) return ['content-type', type, 'content-length', length];
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

/** A body split around its one varying field, `retryAfterMs`, with its byte length. */
interface BodyParts {
  readonly head: string;
  readonly tail: string;
  /** UTF-8 bytes of head + tail. */
  readonly bytes: number;
}

function bodyParts(row: RefusalRow, signal: RetrySignal | undefined, detail: string): BodyParts {
  const fields =
    `{"type":"${row.type}","title":"${row.title}","status":${row.status},` +
    `"detail":${asciiJson(detail)}`;
  const head = signal === undefined ? fields : fields + ',"retryAfterMs":';
  const tail = signal === undefined ? '}' : `,"spillwayRetry":"${signal}"}`;
  return { head, tail, bytes: utf8Length(head) + utf8Length(tail) };
}

/** Parts per reason and signal, `none` for no signal (a handful per reason): the hot path. */
const partsCache: Partial<Record<RefusalReason, Partial<Record<RetrySignal | 'none', BodyParts>>>> =
  {};

function cachedParts(reason: RefusalReason, signal: RetrySignal | undefined): BodyParts {
  const bySignal = (partsCache[reason] ??= {});
  const key = signal ?? 'none';
  let parts = bySignal[key];
  if (parts === undefined) {
    const row = refusalTable[reason];
    parts = bodyParts(row, signal, row.detail);
    bySignal[key] = parts;
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
