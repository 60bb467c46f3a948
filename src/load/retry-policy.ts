/**
 * The generator's optional client-side retry policy, so users can reproduce what their callers
 * do under overload: no retries, N immediate retries (the classic retry storm), or N retries
 * with full-jitter exponential backoff that never comes sooner than `Retry-After`.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';
import type { Outcome } from './outcome.js';

/** How the generator retries a failed attempt. `retries` counts extra attempts (≥ 1). */
export type RetryPolicy =
  | { readonly kind: 'none' }
  | { readonly kind: 'immediate'; readonly retries: number }
  | {
      readonly kind: 'backoff';
      readonly retries: number;
      /** First backoff ceiling; doubles per attempt. @default 100 */
      readonly baseMs?: number;
      /** Largest backoff ceiling. @default 10000 */
      readonly maxDelayMs?: number;
    };

/** What happened to the attempt that might be retried. */
export interface AttemptEnd {
  /** Attempts made so far for this request, including the one that just ended (≥ 1). */
  readonly attempt: number;
  readonly outcome: Outcome;
  /** The response status, 0 without a response. */
  readonly status: number;
  /** The response's `Retry-After`, in ms, if it had one. */
  readonly retryAfterMs: number | undefined;
}

/**
 * Whether and when to retry: the delay in ms, or `undefined` for no retry. Retries follow
 * failures a caller would retry (429/503, other 5xx, timeouts, network errors), never 2xx or
 * other 4xx, and never past the policy's attempt count.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  end: AttemptEnd,
  random: () => number,
): number | undefined {
  if (policy.kind === 'none' || end.attempt > policy.retries) return undefined;
  const retryable =
    end.outcome === 'rejected' ||
    end.outcome === 'timeout' ||
    end.outcome === 'network' ||
    (end.outcome === 'error' && end.status >= 500);
  if (!retryable) return undefined;
  if (policy.kind === 'immediate') return 0;
  const baseMs = policy.baseMs ?? 100;
  const ceiling = Math.min(policy.maxDelayMs ?? 10_000, baseMs * 2 ** (end.attempt - 1));
  return Math.max(end.retryAfterMs ?? 0, random() * ceiling);
}

/**
 * Parses `none`, `immediate:N`, `backoff:N` or `backoff:N:baseMs`; the error names `option`
 * and the value.
 */
export function parseRetryPolicy(text: string, option = 'retry'): RetryPolicy {
  const expected = "'none', 'immediate:N' or 'backoff:N[:baseMs]' with N a positive integer";
  const [kind, count, base, ...rest] = text.trim().split(':');
  if (kind === 'none' && count === undefined) return { kind: 'none' };
  const retries = Number(count);
  if (!Number.isSafeInteger(retries) || retries < 1 || rest.length > 0) {
    throw new SpillwayConfigError(option, expected, text);
  }
  if (kind === 'immediate' && base === undefined) return { kind: 'immediate', retries };
  if (kind === 'backoff') {
    if (base === undefined) return { kind: 'backoff', retries };
    const baseMs = Number(base);
    if (Number.isFinite(baseMs) && baseMs > 0) return { kind: 'backoff', retries, baseMs };
  }
  throw new SpillwayConfigError(option, expected, text);
}

/** The inverse of {@link parseRetryPolicy}, for reports. */
export function formatRetryPolicy(policy: RetryPolicy): string {
  if (policy.kind === 'none') return 'none';
  if (policy.kind === 'immediate') return `immediate:${policy.retries}`;
  return policy.baseMs === undefined
    ? `backoff:${policy.retries}`
    : `backoff:${policy.retries}:${policy.baseMs}`;
}

/** Validates a policy object given in options; the error names `option`. */
export function checkRetryPolicy(option: string, value: unknown): RetryPolicy {
  const p = value as Partial<Record<string, unknown>> | null;
  const ok =
    typeof p === 'object' &&
    p !== null &&
    (p['kind'] === 'none' ||
      ((p['kind'] === 'immediate' || p['kind'] === 'backoff') &&
        Number.isSafeInteger(p['retries']) &&
        (p['retries'] as number) >= 1 &&
        (p['baseMs'] === undefined || (typeof p['baseMs'] === 'number' && p['baseMs'] > 0)) &&
        (p['maxDelayMs'] === undefined ||
          (typeof p['maxDelayMs'] === 'number' && p['maxDelayMs'] > 0))));
  if (!ok) {
    throw new SpillwayConfigError(
      option,
      "a retry policy: { kind: 'none' }, { kind: 'immediate', retries } or { kind: 'backoff', retries, baseMs?, maxDelayMs? }",
      value,
    );
  }
  return value as RetryPolicy;
}
