/**
 * The records a call leaves as it goes: the work it carries, its settled options, and each
 * attempt with what it holds until it settles. Shapes only; `attempt.ts` fills them in.
 *
 * @module
 */
import type { BreakerCall, Criticality, Permit } from '../index.js';
import type { AttemptScope } from './attempt-scope.js';

/**
 * One attempt's work. `start` begins it (what it throws is passed on as it is); `settle`, when
 * given, reads what it resolved with: undefined when that is the answer as it stands and does
 * not count against the dependency (the common case, settled without another promise), or a
 * promise of the answer, rejecting with the error to raise instead (a response that is a
 * refusal); what it throws is not an answer at all, and the caller's doing. `failed` says
 * whether an answer settled through that promise counts against the dependency (a 500 does).
 * A rejection of the work that neither timer nor caller caused is the caller's own when
 * `callersOwn` says so (a malformed request, refused before anything was sent), and is
 * otherwise turned by `fault` into the error to handle. `idempotent`, `replayable` and
 * `signal` are the call's defaults.
 */
export interface Work<T> {
  readonly idempotent: boolean;
  readonly replayable: boolean;
  readonly signal: AbortSignal | undefined;
  start(attempt: Attempt<T>): T | PromiseLike<T>;
  settle?(value: T, attempt: Attempt<T>): Promise<T> | undefined;
  failed?(value: T): boolean;
  callersOwn?(error: unknown): boolean;
  /** What a rejection of `settle`'s promise says, when the work knows better than its error. */
  verdictOf?(error: unknown): Verdict | undefined;
  fault?(error: unknown): unknown;
  /** Whether an answer may be held back for a retry (`retryOn`); then `takeHeld` gives it up. */
  readonly holds?: boolean;
  /** The answer held back for a retry that was not made, if any, given up once. */
  takeHeld?(): T | undefined;
  /** The answer to a failure the dependency's fallback chooses, if it gives one for this work. */
  readonly defaultFallback?: ((error: unknown) => T | PromiseLike<T>) | undefined;
}

/** One call: its work and its settled options. */
export interface CallState<T> {
  readonly work: Work<T>;
  /** Attempts allowed in all. */
  readonly maxAttempts: number;
  readonly expiresAt: number;
  /**
   * The clock's reading `expiresAt` was made from (a deadline given in ms), NaN when none was
   * made: the first attempt, which starts at once, checks the deadline against it.
   */
  readonly readAt: number;
  /** True when a caller signal already aborts at `expiresAt` (a `Deadline`'s): no timer needed. */
  readonly deadlineSignalled: boolean;
  /** Every caller signal joined (the options', the init's, the deadline's). */
  readonly signal: AbortSignal | undefined;
  /** Removes the listeners joining several caller signals into `signal`, if it took any. */
  readonly unlink: (() => void) | undefined;
  readonly criticality: Criticality;
  /** The criticality's rank (see `criticalityRank`). */
  readonly rank: number;
  readonly idempotent: boolean;
  /** Whether the retry budget has counted the call as a request (at its first outcome). */
  requested: boolean;
  /** The answer to a failure the dependency's `fallback.on` chooses, if any. */
  readonly fallback: ((error: unknown) => T | PromiseLike<T>) | undefined;
  /** How its last attempt so far ended. */
  lastVerdict: Verdict | undefined;
}

/**
 * One attempt of a call, and what it holds until it settles. A literal, not a class: made on
 * every call, and a literal is allocated in place where a constructor may not be inlined.
 */
export interface Attempt<T> {
  readonly call: CallState<T>;
  /** 1 for the first. */
  readonly number: number;
  /** The breaker's ticket; or, let in by this dependency's own closed breaker, its generation. */
  ticket: BreakerCall | undefined;
  generation: number;
  /** The cap's permit; or `slot` when a free slot was taken without one. */
  permit: Permit | undefined;
  slot: boolean;
  scope: AttemptScope;
  /** The ms it has left (set once it may start); its propagation fields are built from it. */
  remainingMs: number | undefined;
}

/**
 * How an attempt ended, as far as the protections the dependency shares are concerned:
 * - `ok`: it answered, with an answer that is not a failure;
 * - `bad-answer`: it answered with a failure (a 5xx that is not a refusal);
 * - `error`: `call`'s work rejected with an ordinary error (the dependency answered, badly);
 * - `refused`: the dependency said it is overloaded (a 429, or a 503 or other refusal with a
 *   `Spillway-Retry`, problem+json or `Retry-After` signal): the dependency doing its job, which
 *   the throttle and the retry budget answer — not a failure for the breaker, which would turn
 *   a dependency that serves part of its traffic into one that serves none;
 * - `failed`: it outlived the dependency's own `timeoutMs`, was not reached, or answered a
 *   bare 503 (no signal: a proxy's, say);
 * - `local`: refused here before anything was sent (own breaker, cap, throttle, deadline);
 * - `caller`: it ended for the caller's own reasons — it gave up, its deadline passed, or its
 *   request was malformed — which say nothing about the dependency. A caller (or a remote
 *   client whose input the caller forwards) cannot trip the breaker, drain the budget, raise
 *   the throttle or shrink an adaptive cap for everyone else.
 *
 * | verdict | breaker | retry budget | throttle | cap |
 * |---|---|---|---|---|
 * | ok | success | success | accept | ok |
 * | refused | – | failure | refusal | dropped |
 * | bad-answer | failure | – | accept | dropped |
 * | error | failure | – | accept | ignored |
 * | failed | failure | failure | refusal | dropped |
 * | local, caller | – | – | – | ignored |
 *
 * The retry budget counts the call as a request at its first outcome, unless `caller`.
 */
export type Verdict = 'ok' | 'refused' | 'bad-answer' | 'error' | 'failed' | 'local' | 'caller';
