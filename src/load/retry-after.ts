/**
 * Reads an HTTP `Retry-After` value (delay-seconds or an HTTP-date) as milliseconds. HTTP
 * speaks seconds; the generator speaks milliseconds; this is the one place that converts.
 *
 * @module
 */

/**
 * `"2"` → 2000; an HTTP-date → ms from `nowEpochMs` (0 if it is in the past); anything else
 * (empty, negative, garbage) → `undefined`, never a throw.
 */
export function parseRetryAfterMs(
  value: string | undefined,
  nowEpochMs: number,
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowEpochMs);
}
