/**
 * The `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-10:
 * Structured Field lists whose items are quoted policy names, with `q`/`w` (quota, window in
 * seconds) and `r`/`t` (remaining, seconds until more quota) parameters.
 *
 * @module
 */
import type { QuotaFields, QuotaInfo } from './refusal.js';

/** A policy name as an SF String: printable ASCII, with `"` and `\` escaped; else `default`. */
export function policyName(name: string): string {
  let out = '';
  for (let i = 0; i < name.length && i < 64; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) continue;
    out += c === 0x22 || c === 0x5c ? `\\${name[i]}` : name[i];
  }
  return `"${out.length > 0 ? out : 'default'}"`;
}

/**
 * The name a client sees, unquoted: what {@link policyName} quotes (printable ASCII, at most 64
 * characters, else `default`). The problem body's `violated-policies` names policies so.
 */
export function policyNameText(name: string): string {
  let out = '';
  for (let i = 0; i < name.length && i < 64; i++) {
    const c = name.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e) out += name[i];
  }
  return out.length > 0 ? out : 'default';
}

/**
 * `RateLimit-Policy` for a token bucket: the window is the whole seconds it takes to refill the
 * burst (at least 1), and the quota is what the rate grants over that window — so a client
 * pacing itself by `q` per `w` keeps to the rate. (Quota = burst would understate it: 150/s
 * with a burst of 15 would read as 15 a second.) The burst itself shows in `RateLimit`'s `r`.
 */
export function formatRateLimitPolicy(
  name: string,
  policy: { readonly ratePerSec: number; readonly burst: number },
): string {
  const windowSec = Math.max(1, Math.ceil(policy.burst / policy.ratePerSec));
  const quota = Math.max(Math.floor(policy.burst), Math.floor(policy.ratePerSec * windowSec));
  return `${policyName(name)};q=${quota};w=${windowSec}`;
}

/**
 * One policy's item of `RateLimit` (`"name";r=…;t=…`), its name already quoted by
 * {@link policyName}: a quota of several policies lists one item each, joined by `, `.
 */
export function rateLimitItem(quotedName: string, remaining: number, resetMs: number): string {
  const r = remaining > 0 ? Math.floor(remaining) : 0;
  const t = resetMs > 0 ? Math.ceil(resetMs / 1000) : 0;
  return quotedName + ';r=' + r + ';t=' + t;
}

/** `RateLimit`: what is left now and the seconds until the bucket is full again. */
export function formatRateLimit(name: string, remaining: number, resetMs: number): string {
  const r = remaining > 0 ? Math.floor(remaining) : 0;
  const t = resetMs > 0 ? Math.ceil(resetMs / 1000) : 0;
  // A client refused again and again gets the same field until a second passes: keep the last.
  if (r !== lastR || t !== lastT || name !== lastName) {
    lastField = `${quoted(name)};r=${r};t=${t}`;
    lastName = name;
    lastR = r;
    lastT = t;
  }
  return lastField;
}

let lastName: string | undefined;
let lastR = -1;
let lastT = -1;
let lastField = '';

// Policy names are few and fixed per limiter: quote each once. Bounded; past the bound, quote
// every time rather than grow.
const quotedNames = new Map<string, string>();

function quoted(name: string): string {
  let q = quotedNames.get(name);
  if (q === undefined) {
    q = policyName(name);
    if (quotedNames.size < 256) quotedNames.set(name, q);
  }
  return q;
}

/**
 * The fields of a quota with several policies, for a refusal (`Refusal.quota`): each policy in
 * `RateLimit-Policy` and in `RateLimit`, in the order given, and those with `violated` set in the
 * problem body's `violated-policies`.
 *
 * @example
 * refusalResponse({
 *   reason: 'quota',
 *   retryAfterMs: 3_000,
 *   quota: quotaFields([
 *     { name: 'per-second', ratePerSec: 10, burst: 10, remaining: 4, resetMs: 600 },
 *     { name: 'hourly', ratePerSec: 1_000 / 3_600, burst: 1_000, remaining: 0, resetMs: 3_000, violated: true },
 *   ]),
 * });
 */
export function quotaFields(
  policies: readonly (QuotaInfo & { readonly violated?: boolean })[],
): QuotaFields {
  const items: string[] = [];
  const now: string[] = [];
  const violated: string[] = [];
  for (const p of policies) {
    items.push(p.policyField ?? formatRateLimitPolicy(p.name, p));
    now.push(rateLimitItem(policyName(p.name), p.remaining, p.resetMs));
    if (p.violated === true) violated.push(p.name);
  }
  return { policy: items.join(', '), now: now.join(', '), violated };
}

// `violated-policies` members, built once per name (a route's policy) and per array of names
// (a quota keeps one array per set of refusing policies). Bounded by name; arrays by the GC.
const memberByName = new Map<string, string>();
const memberByArray = new WeakMap<readonly string[], string>();

/** The body member naming one violated policy: `,"violated-policies":["name"]`. */
export function violatedMember(name: string): string {
  let m = memberByName.get(name);
  if (m === undefined) {
    m = memberOf([name]);
    if (memberByName.size < 256) memberByName.set(name, m);
  }
  return m;
}

/** The body member naming the policies in `names`; `''` for none. */
export function violatedMemberOf(names: readonly string[]): string {
  let m = memberByArray.get(names);
  if (m === undefined) {
    m = names.length === 0 ? '' : memberOf(names);
    memberByArray.set(names, m);
  }
  return m;
}

function memberOf(names: readonly string[]): string {
  // Names as clients see them in the fields: printable ASCII, so the JSON is ASCII too.
  return `,"violated-policies":${JSON.stringify(names.map(policyNameText))}`;
}

/** Visible ASCII and spaces only: a field value formatted elsewhere that can go out as is. */
export function isFieldText(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}
