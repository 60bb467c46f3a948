/**
 * Reads an HTTP `Retry-After` value (delay-seconds or an HTTP-date) as milliseconds. HTTP
 * speaks seconds; the generator speaks milliseconds; this is the one place that converts.
 *
 * @module
 */
import { maxTimerDelayMs } from './timer.js';

/**
 * `"2"` → 2000; an HTTP-date → ms from `nowEpochMs` (0 if it is in the past); anything else
 * (empty, negative, garbage) → `undefined`, never a throw. A server's value is clamped to
 * {@link maxTimerDelayMs} (about 24.8 days): however large, it means "not in this run".
 */
export function parseRetryAfterMs(
  value: string | undefined,
  nowEpochMs: number,
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, maxTimerDelayMs);
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - nowEpochMs), maxTimerDelayMs);
}
