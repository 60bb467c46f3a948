/**
 * Refusal fields as ready-to-send `name: value\r\n` lines, checked once and kept: the lines an
 * adapter can splice into a head without node:http checking each field again (S8 in
 * BENCHMARKS.md). Internal to `spillway/http` and its adapters.
 *
 * @module
 */
import type { RetrySignal } from '../index.js';
import { retryAfterSeconds } from './codecs.js';

/** `Retry-After` for a wait, as a value and as a line; the last one is kept (seconds repeat). */
export interface RetryAfterField {
  readonly seconds: number;
  readonly value: string;
  readonly line: string;
}

let lastRetryAfter: RetryAfterField = { seconds: 1, value: '1', line: 'retry-after: 1\r\n' };

export function retryAfterField(retryAfterMs: number): RetryAfterField {
  const seconds = retryAfterSeconds(retryAfterMs);
  if (seconds !== lastRetryAfter.seconds) {
    const value = String(seconds);
    lastRetryAfter = { seconds, value, line: 'retry-after: ' + value + '\r\n' };
  }
  return lastRetryAfter;
}

// The RateLimit fields as lines, for the last policy and state seen: a client refused again and
// again gets the same two fields until a second passes, so they are joined once, not per refusal.
let lastPolicy: string | undefined;
let lastNow: string | undefined;
let lastLines: string | undefined;
// The last policy field passed in that passed the check: a route passes the same one every time,
// so it is checked once, not each second as `RateLimit` changes.
let checkedPolicy: string | undefined;

/** `RateLimit-Policy` and `RateLimit` as lines; `undefined` if `policy` needs a check it fails. */
export function rateLimitLines(policy: string, now: string, check: boolean): string | undefined {
  if (check && policy !== checkedPolicy) {
    if (!isFieldValue(policy)) return undefined;
    checkedPolicy = policy;
  }
  if (policy !== lastPolicy || now !== lastNow) {
    lastPolicy = policy;
    lastNow = now;
    lastLines = 'ratelimit-policy: ' + policy + '\r\nratelimit: ' + now + '\r\n';
  }
  return lastLines;
}

// `Content-Type` and `Spillway-Retry` as lines, per name of the signal field and signal. Bounded:
// a deployment uses one or two names; past the bound, lines are built on every call.
const fixedByName = new Map<string, Partial<Record<RetrySignal, string | undefined>>>();
const maxFixedNames = 16;

/** The two fields every refusal has, as lines; `undefined` if the configured name is not a token. */
export function fixedLines(retryName: string, signal: RetrySignal): string | undefined {
  // A signal from untyped code that is none of the three is written field by field, as is.
  if (signal !== 'later' && signal !== 'elsewhere' && signal !== 'never') return undefined;
  let bySignal = fixedByName.get(retryName);
  if (bySignal === undefined) {
    bySignal = {};
    if (fixedByName.size < maxFixedNames) fixedByName.set(retryName, bySignal);
  }
  if (!(signal in bySignal)) {
    bySignal[signal] =
      fieldName.test(retryName) && !managedByServer.test(retryName)
        ? `content-type: application/problem+json\r\n${retryName}: ${signal}\r\n`
        : undefined;
  }
  return bySignal[signal];
}

/** An HTTP field name (RFC 9110 token). */
const fieldName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Fields an HTTP server writes or frames by itself: never passed as ready lines. */
const managedByServer =
  /^(?:content-length|connection|transfer-encoding|keep-alive|date|trailer|upgrade)$/i;

/** Visible ASCII and spaces only: a value that can go on the wire as is. */
function isFieldValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}
