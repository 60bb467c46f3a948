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
