/**
 * Propagation: when a handler fails because something it depends on is overloaded, answer the
 * caller with the matching signal instead of a generic 500 — and `never` when the dependency
 * said stop or a retry layer below already retried, so retries happen at one layer only.
 *
 * @module
 */
import {
  RateLimitedError,
  RejectedError,
  isSpillwayError,
  retrySignals,
  type RetrySignal,
} from '../index.js';
import { refusalOfRejection } from './refusal-of-rejection.js';
import type { Refusal } from './refusal.js';

interface SignalCarrier {
  readonly signal?: unknown;
  readonly retryAfterMs?: unknown;
  readonly attempts?: unknown;
}

function statusOf(error: object): number | undefined {
  const e = error as { status?: unknown; statusCode?: unknown; response?: { status?: unknown } };
  const status = e.status ?? e.statusCode ?? e.response?.status;
  return typeof status === 'number' ? status : undefined;
}

function finiteMs(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * The refusal a failed handler's error stands for, or undefined for an ordinary failure (a
 * 500). Recognises: Spillway errors carrying a `signal` (from `spillway/client`); Spillway's own
 * rejections from a limit used inside the handler; and any error with `status`, `statusCode` or
 * `response.status` of 429 or 503 (HTTP client libraries). Never throws: a value whose fields
 * throw when read (a getter, a proxy) is an ordinary failure.
 */
export function refusalFromError(error: unknown): Refusal | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  try {
    return refusalOf(error);
  } catch {
    return undefined;
  }
}

function refusalOf(error: object): Refusal | undefined {
  if (isSpillwayError(error)) {
    const e = error as SignalCarrier;
    const retryAfterMs = finiteMs(e.retryAfterMs);
    if (retrySignals.includes(e.signal as RetrySignal)) {
      const attempts = typeof e.attempts === 'number' ? e.attempts : 1;
      // A layer below already retried: our caller must not retry again.
      const signal: RetrySignal = attempts > 1 ? 'never' : (e.signal as RetrySignal);
      return { reason: 'dependency', signal, retryAfterMs };
    }
    if (error instanceof RejectedError || error instanceof RateLimitedError) {
      // A limit the handler used refused. What that means here (none for `aborted`: the work
      // was called off) is passed up as a dependency's refusal: a spent deadline stays one.
      const here = refusalOfRejection(error);
      if (here === undefined || here.reason === 'deadline') return here;
      return { reason: 'dependency', signal: 'later', retryAfterMs };
    }
    return undefined;
  }
  const status = statusOf(error);
  if (status === 429 || status === 503) {
    return {
      reason: 'dependency',
      signal: 'later',
      retryAfterMs: finiteMs((error as SignalCarrier).retryAfterMs),
    };
  }
  return undefined;
}
