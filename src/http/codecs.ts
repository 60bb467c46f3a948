/**
 * Codecs for the header values Spillway reads. Every parser returns `undefined` ("absent") for
 * anything malformed — empty, too long, negative, fractional, `NaN`, `1e309`, a list from
 * duplicated fields — and never throws, so a hostile client can only fall back to defaults.
 *
 * @module
 */
import { criticalityRank, type Criticality, type RetrySignal } from '../index.js';

/** Longest header value a codec looks at; anything longer is absent. */
const maxLength = 32;

/** Largest deadline accepted from a header: one day. Longer is absent, not clamped. */
export const maxHeaderDeadlineMs = 86_400_000;

/** Largest wait a Retry-After may ask for when parsed: one day. */
export const maxRetryAfterMs = 86_400_000;

function firstValue(value: string | readonly string[] | undefined | null): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    // A repeated field arrives as an array: ambiguous, so absent.
    return value.length === 1 && typeof value[0] === 'string' ? value[0] : undefined;
  }
  return value;
}

/** A non-negative decimal integer of at most `digits` digits, else undefined. */
function digitsValue(raw: string, digits: number): number | undefined {
  const s = raw.trim();
  if (s.length === 0 || s.length > digits) return undefined;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return undefined;
    n = n * 10 + c;
  }
  return n;
}

/** `Spillway-Deadline`: remaining milliseconds, a whole number from 0 to one day. */
export function parseDeadlineMs(
  value: string | readonly string[] | undefined | null,
): number | undefined {
  const raw = firstValue(value);
  if (raw === undefined || raw.length > maxLength) return undefined;
  const ms = digitsValue(raw, 9);
  return ms === undefined || ms > maxHeaderDeadlineMs ? undefined : ms;
}

/** Formats a remaining deadline for `Spillway-Deadline` (whole ms, never negative). */
export function formatDeadlineMs(ms: number): string {
  return ms > 0 ? String(Math.floor(ms)) : '0';
}

/** `Spillway-Criticality`: one of the four names (case-insensitive), else undefined. */
export function parseCriticality(
  value: string | readonly string[] | undefined | null,
): Criticality | undefined {
  const raw = firstValue(value);
  if (raw === undefined || raw.length > maxLength) return undefined;
  const name = raw.trim().toLowerCase();
  return criticalityRank(name) === -1 ? undefined : (name as Criticality);
}

/** `Spillway-Attempt`: 1 for the first try, up to 100; else undefined. */
export function parseAttempt(
  value: string | readonly string[] | undefined | null,
): number | undefined {
  const raw = firstValue(value);
  if (raw === undefined || raw.length > maxLength) return undefined;
  const n = digitsValue(raw, 3);
  return n === undefined || n < 1 || n > 100 ? undefined : n;
}

/** `Spillway-Retry`: `later`, `elsewhere` or `never`; else undefined. */
export function parseRetrySignal(
  value: string | readonly string[] | undefined | null,
): RetrySignal | undefined {
  const raw = firstValue(value);
  if (raw === undefined || raw.length > maxLength) return undefined;
  const s = raw.trim().toLowerCase();
  return s === 'later' || s === 'elsewhere' || s === 'never' ? s : undefined;
}

/** Whole seconds for `Retry-After`: rounded up, never below 1. */
export function retryAfterSeconds(ms: number): number {
  if (!(ms > 0)) return 1;
  const s = Math.ceil(ms / 1000);
  return s > 1 ? s : 1;
}

/**
 * `Retry-After` as milliseconds to wait: delay-seconds or an HTTP-date (relative to
 * `nowWallMs`). Past dates give 0; more than a day is clamped to a day; a list, a negative or
 * fractional number, or garbage gives undefined.
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined | null,
  nowWallMs: number,
): number | undefined {
  const raw = firstValue(value);
  if (raw === undefined || raw.length > 64) return undefined;
  const s = raw.trim();
  if (s.length === 0) return undefined;
  const c = s.charCodeAt(0);
  if (c >= 48 && c <= 57) {
    const seconds = digitsValue(s, 12);
    if (seconds === undefined) return undefined;
    return Math.min(seconds * 1000, maxRetryAfterMs);
  }
  // HTTP-date (IMF-fixdate, or the obsolete forms Date.parse also reads); must name a weekday.
  if (!/^[A-Za-z]{3},? /.test(s)) return undefined;
  const at = Date.parse(s);
  if (Number.isNaN(at)) return undefined;
  const ms = at - nowWallMs;
  return ms <= 0 ? 0 : Math.min(ms, maxRetryAfterMs);
}
