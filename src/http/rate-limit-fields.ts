/**
 * The `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-10:
 * Structured Field lists whose items are quoted policy names, with `q`/`w` (quota, window in
 * seconds) and `r`/`t` (remaining, seconds until more quota) parameters.
 *
 * @module
 */

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

/** `RateLimit-Policy` for a token bucket: quota = burst, window = time to refill it, in s. */
export function formatRateLimitPolicy(
  name: string,
  policy: { readonly ratePerSec: number; readonly burst: number },
): string {
  const windowSec = Math.max(1, Math.ceil(policy.burst / policy.ratePerSec));
  return `${policyName(name)};q=${Math.floor(policy.burst)};w=${windowSec}`;
}

/** `RateLimit`: what is left now and the seconds until the bucket is full again. */
export function formatRateLimit(name: string, remaining: number, resetMs: number): string {
  const r = remaining > 0 ? Math.floor(remaining) : 0;
  const t = resetMs > 0 ? Math.ceil(resetMs / 1000) : 0;
  return `${quoted(name)};r=${r};t=${t}`;
}

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
