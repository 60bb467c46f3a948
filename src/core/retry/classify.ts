/**
 * What a failure says about retrying: the default classifier behind `retry()`. It reads the
 * fields Spillway errors carry (`signal`, `retryAfterMs`, `attempts`, `sent`), the `status` of
 * HTTP client errors, and the codes of network errors that mean "the request never left".
 * Anything else is not an overload signal and passes up untouched.
 *
 * @module
 */
import { errorCodes } from '../errors/codes.js';
import { retrySignals, type RetrySignal } from '../errors/overloaded-error.js';
import { isSpillwayError } from '../errors/spillway-error.js';

/** How a failure bears on retrying. */
export interface RetryClass {
  /** What the failure tells the caller to do next (and what a layer above will be told). */
  readonly signal: RetrySignal;
  /** When a retry could succeed, if the callee said. */
  readonly retryAfterMs?: number | undefined;
  /** Whether this layer may retry it at all (`never`, timeouts and sent network errors may not). */
  readonly retryable: boolean;
  /**
   * False when the request certainly never reached the callee: such a failure is retried even
   * for work that is not idempotent. @default true
   */
  readonly sent: boolean;
}

/** Spillway codes for refusals made in this process: never retried, never counted against a dependency. */
const localCodes: ReadonlySet<string> = new Set([
  errorCodes.invalidOption,
  errorCodes.invalidArgument,
  errorCodes.rateLimited,
  errorCodes.queueFull,
  errorCodes.queueTimeout,
  errorCodes.deadline,
  errorCodes.aborted,
  errorCodes.shed,
  errorCodes.retryBudget,
  errorCodes.circuitOpen,
  errorCodes.throttled,
]);

/** Network error codes (Node, undici) raised before any byte of the request was written. */
const unsentCodes: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * True when `error` (or its `cause` chain, or every error of an `AggregateError`) is a network
 * error raised before the request was sent: connection refused, DNS failure, connect timeout.
 */
export function isUnsentNetworkError(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && unsentCodes.has(code)) return true;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && errors.every(isUnsentNetworkError)) {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** True for a refusal made in this process (own cap, own budget, own breaker or throttle, own deadline). */
export function isLocalRefusal(error: unknown): boolean {
  return isSpillwayError(error) && localCodes.has(error.code);
}

function finiteMs(value: unknown): number | undefined {
  return typeof value === 'number' && value >= 0 && value < Infinity ? value : undefined;
}

function statusOf(error: object): number | undefined {
  const e = error as { status?: unknown; statusCode?: unknown; response?: { status?: unknown } };
  const status = e.status ?? e.statusCode ?? e.response?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * The default classifier: how a failure bears on retrying, or `undefined` when it is not an
 * overload signal (then it is neither retried nor counted against the budget).
 */
export function classifyError(error: unknown): RetryClass | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if (isSpillwayError(error)) {
    const code = error.code;
    if (localCodes.has(code)) return undefined;
    const e = error as { signal?: unknown; retryAfterMs?: unknown; sent?: unknown };
    if (code === errorCodes.dependencyTimeout) {
      return { signal: 'later', retryable: false, sent: true };
    }
    if (code === errorCodes.unreachable) {
      const sent = e.sent !== false;
      return { signal: sent ? 'later' : 'elsewhere', retryable: !sent, sent };
    }
  }
  const e = error as {
    signal?: unknown;
    retryAfterMs?: unknown;
    attempts?: unknown;
    sent?: unknown;
  };
  if (retrySignals.includes(e.signal as RetrySignal)) {
    // A layer below already retried: retrying here would multiply its attempts.
    const retriedBelow = typeof e.attempts === 'number' && e.attempts > 1;
    const signal: RetrySignal = retriedBelow ? 'never' : (e.signal as RetrySignal);
    return {
      signal,
      retryAfterMs: finiteMs(e.retryAfterMs),
      retryable: signal !== 'never',
      sent: e.sent !== false,
    };
  }
  const status = statusOf(error);
  if (status === 429 || status === 503) {
    const retryAfterMs = finiteMs(e.retryAfterMs);
    return {
      signal: status === 429 || retryAfterMs !== undefined ? 'later' : 'elsewhere',
      retryAfterMs,
      retryable: true,
      sent: true,
    };
  }
  if (isUnsentNetworkError(error)) return { signal: 'elsewhere', retryable: true, sent: false };
  return undefined;
}
