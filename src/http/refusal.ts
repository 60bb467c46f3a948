/**
 * The decision → response table: every answer Spillway writes instead of the handler's — each
 * refusal and the 500 for a failure that is not overload — with its status, its
 * `Spillway-Retry` signal, and an `application/problem+json` body with a stable `type` per
 * reason. One place, so the node, Express and Fastify adapters answer identically
 * (`refusal-response.ts` turns a row into bytes).
 *
 * @module
 */
import type { RetrySignal } from '../index.js';

/** Why a request was refused. */
export type RefusalReason =
  /** The client's quota is spent (429). */
  | 'quota'
  /** The client ignored earlier 429s; an enforced, longer wait (429). */
  | 'penalty'
  /** The client kept ignoring them; a cool-off block (429). */
  | 'blocked'
  /** Suspended until an operator lifts it: the last step, or an operator's (429, never). */
  | 'suspended'
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
  | 'unavailable'
  /**
   * The request failed for a reason that is not overload: a handler's bug, or a failure inside
   * admission itself (500, no retry advice; the cause goes to `onError`, never to the client).
   */
  | 'failure';

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

/**
 * The quota behind a 429 as fields already formatted: what a quota of several policies (or the
 * guard, which formats once per client) hands over. `quotaFields` builds one from
 * {@link QuotaInfo}s.
 */
export interface QuotaFields {
  /** `RateLimit-Policy`, every policy of the quota; undefined to send no RateLimit fields. */
  readonly policy: string | undefined;
  /** `RateLimit`, what is left of each policy; sent only with `policy`. */
  readonly now: string | undefined;
  /**
   * The policies that refused, by name: draft-10's `violated-policies` member of the problem
   * body. Keep one array per set of names (the response's strings are cached by its identity).
   */
  readonly violated: readonly string[];
}

/** A refusal, before it is written. */
export interface Refusal {
  readonly reason: RefusalReason;
  /** What the caller should do; defaults per reason (see {@link refusalTable}). */
  readonly signal?: RetrySignal | undefined;
  /** When a retry could succeed; drives `Retry-After` for `later`. */
  readonly retryAfterMs?: number | undefined;
  /**
   * The quota behind a 429: one policy's state, or the fields of several (see
   * {@link QuotaFields}). Its policies go in the RateLimit fields, and those that refused in
   * the body's `violated-policies` (one policy's `QuotaInfo`: that policy).
   */
  readonly quota?: QuotaInfo | QuotaFields | undefined;
  /** Occurrence-specific explanation; defaults per reason. */
  readonly detail?: string | undefined;
}

/** One reason's answer. */
export interface RefusalRow {
  readonly status: 429 | 500 | 503;
  /**
   * The default `Spillway-Retry`; `undefined` for an answer that gives no retry advice (the
   * 500: no signal field, and no `retryAfterMs` or `spillwayRetry` in the body).
   */
  readonly signal: RetrySignal | undefined;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
}

const iana = 'https://iana.org/assignments/http-problem-types#';
const own = 'urn:spillway:problem:';

/**
 * Status, default signal, problem `type`, `title` and default `detail` per reason.
 *
 * A new reason is three things: its member of {@link RefusalReason}, its row here (the compiler
 * asks for it), and its producer — the guard's check that refuses with it (`src/node/checks.ts`)
 * or, for a refusal a core limit returns, its case in `refusalOfRejection`. Building, writing,
 * publishing on the refusal channel and every adapter follow from the row.
 */
export const refusalTable: Readonly<Record<RefusalReason, RefusalRow>> = Object.freeze({
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
  suspended: {
    status: 429,
    signal: 'never',
    type: `${own}client-suspended`,
    title: 'Client suspended',
    detail:
      'This client is suspended until an operator lifts the suspension; retrying will not help.',
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
  failure: {
    status: 500,
    signal: undefined,
    type: 'about:blank',
    title: 'Internal Server Error',
    detail: 'The request failed on the server.',
  },
});
