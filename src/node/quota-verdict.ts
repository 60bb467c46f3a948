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

/**
 * What a verdict is formatted from besides the client's buckets. Build each one whole, with
 * every field, as {@link verdictInput} does: one shape for all of them keeps `verdictOf` fast,
 * and an object spread here cost more than the whole decision (a runtime call each time).
 */
export interface VerdictInput {
  readonly headers: RateLimitHeaders;
  /** Per policy, its store; undefined for a memory policy. */
  readonly stores: readonly (RateStore | undefined)[];
  /** Per policy, a store's answer; undefined for a memory policy (or a store not asked). */
  readonly answers: readonly (RateDecision | undefined)[] | undefined;
  /** Which policies refused (a bit each) and the longest wait; undefined when all admitted. */
  readonly refused: { readonly mask: number; readonly wait: number } | undefined;
  /** Whether a store answered by its failure policy. */
  readonly degraded: boolean;
}

/** A {@link VerdictInput}, every field set. */
export function verdictInput(
  base: Pick<VerdictInput, 'headers' | 'stores'>,
  more: Partial<Pick<VerdictInput, 'answers' | 'refused' | 'degraded'>> = {},
): VerdictInput {
  return {
    headers: base.headers,
    stores: base.stores,
    answers: more.answers,
    refused: more.refused,
    degraded: more.degraded === true,
  };
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
  at: VerdictInput,
): QuotaVerdict {
  const refused = at.refused;
  const answers = at.answers;
  const headers = at.headers;
  const format = headers === 'always' || (refused !== undefined && headers !== false);
  // `RateLimit` as last formatted for these numbers: the same text again while every policy
  // says the same (a refused client, a client pacing itself), so it is built only on a change.
  const last = limits.lastNow;
  let changed = false;
  let remaining = Infinity;
  let limit = limits.burst[0]!;
  let resetMs = 0;
  for (let i = 0; i < limits.burst.length; i++) {
    let r: number;
    let reset: number;
    const d = answers === undefined ? undefined : answers[i];
    if (d === undefined) {
      // A store policy not asked (a memory policy refused first): nothing to say of it.
      if (at.stores[i] !== undefined) {
        if (last.r[i] !== -1) changed = true;
        last.r[i] = -1;
        continue;
      }
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
    if (format) {
      const whole = r > 0 ? Math.floor(r) : 0;
      const seconds = reset > 0 ? Math.ceil(reset / 1000) : 0;
      if (whole !== last.r[i] || seconds !== last.t[i]) {
        last.r[i] = whole;
        last.t[i] = seconds;
        changed = true;
      }
    }
  }
  let now: string | undefined;
  if (format) {
    if (changed || last.text === '') last.text = rateLimitText(limits);
    now = last.text;
  }
  const policy = format ? limits.policyField : undefined;
  const degraded = at.degraded;
  if (refused === undefined) {
    return {
      ok: true,
      remaining: remaining > 0 ? remaining : 0,
      limit,
      resetMs,
      degraded,
      policy,
      now,
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
    now,
    violated: limits.violated(refused.mask),
  };
}

/** `RateLimit` from the numbers last seen for `limits` (a policy marked -1 left out). */
function rateLimitText(limits: Limits): string {
  const { r, t } = limits.lastNow;
  let text = '';
  for (let i = 0; i < r.length; i++) {
    if (r[i] === -1) continue;
    text += (text === '' ? '' : ', ') + limits.quoted[i]! + ';r=' + r[i]! + ';t=' + t[i]!;
  }
  return text;
}
