/**
 * What a route's quota says about one request: admitted or refused, and what each policy has
 * left, as a store's decision (for the `spillway:quota` channel) and as the RateLimit fields a
 * response carries — formatted only when they will be sent.
 *
 * @module
 */
import type { RateDecision, RateStore } from '../index.js';
import { tokenEpsilon } from '../core/token-bucket/token-bucket-math.js';
import type { QuotaFields } from '../http/index.js';
import { rateLimitItem } from '../http/rate-limit-fields.js';
import type { ClientState } from './quota-buckets.js';
import type { Limits } from './quota-limits.js';

/** Where the RateLimit fields go: every quota response, refusals only, or none. */
export type RateLimitHeaders = 'always' | 'refusals-only' | false;

/**
 * What the quota decided, as a store's decision (for the `spillway:quota` channel) and as the
 * fields a response carries: on a refusal, the policies that refused; on an admission, the
 * fields to set when the route sends them on every response (else `policy` is undefined).
 */
export type QuotaVerdict = RateDecision & QuotaFields;

/** What every verdict of a quota is formatted by. */
export interface VerdictShape {
  readonly headers: RateLimitHeaders;
  /** Per policy, its store; undefined for a memory policy. */
  readonly stores: readonly (RateStore | undefined)[];
}

/** No violated policies. */
export const none: readonly string[] = Object.freeze([]);

/**
 * The verdict, with what each policy has left: memory policies from the client's buckets,
 * store policies from their answers (`answers`; one not asked is left out of `RateLimit`).
 */
export function verdictOf(
  limits: Limits,
  state: ClientState | undefined,
  at: VerdictShape & {
    readonly answers?: readonly (RateDecision | undefined)[];
    readonly refused?: { readonly mask: number; readonly wait: number };
    readonly degraded?: boolean;
  },
): QuotaVerdict {
  const refused = at.refused;
  const answers = at.answers;
  const headers = at.headers;
  const format = headers === 'always' || (refused !== undefined && headers !== false);
  let now = '';
  let remaining = Infinity;
  let limit = limits.burst[0]!;
  let resetMs = 0;
  for (let i = 0; i < limits.burst.length; i++) {
    let r: number;
    let reset: number;
    const d = answers === undefined ? undefined : answers[i];
    if (d === undefined) {
      // A store policy not asked (a memory policy refused first): nothing to say of it.
      if (at.stores[i] !== undefined) continue;
      const t = state!.tokens[i]!;
      const missing = limits.burst[i]! - t;
      r = Math.floor(t + tokenEpsilon);
      reset = missing <= tokenEpsilon ? 0 : Math.ceil(missing / limits.ratePerMs[i]!);
    } else {
      r = d.remaining;
      reset = d.resetMs;
    }
    if (r < remaining) {
      remaining = r;
      limit = limits.burst[i]!;
    }
    if (reset > resetMs) resetMs = reset;
    if (format) now += (now === '' ? '' : ', ') + rateLimitItem(limits.quoted[i]!, r, reset);
  }
  const policy = format ? limits.policyField : undefined;
  const degraded = at.degraded === true;
  if (refused === undefined) {
    return {
      ok: true,
      remaining: remaining > 0 ? remaining : 0,
      limit,
      resetMs,
      degraded,
      policy,
      now: format ? now : undefined,
      violated: none,
    };
  }
  return {
    ok: false,
    remaining: 0,
    retryAfterMs: refused.wait,
    limit,
    resetMs,
    degraded,
    policy,
    now: format ? now : undefined,
    violated: limits.violated(refused.mask),
  };
}
