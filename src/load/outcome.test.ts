import { describe, expect, it } from 'vitest';
import { outcomeOfStatus } from './outcome.js';
import { parseRetryAfterMs } from './retry-after.js';
import { maxTimerDelayMs } from './timer.js';

describe('outcomeOfStatus', () => {
  it('2xx is ok, 429 and 503 are rejected, everything else is an error', () => {
    expect([200, 201, 204, 299].map(outcomeOfStatus)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect([429, 503].map(outcomeOfStatus)).toEqual(['rejected', 'rejected']);
    expect([301, 400, 404, 500, 502, 504].map(outcomeOfStatus)).toEqual(new Array(6).fill('error'));
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delay-seconds', () => {
    expect(parseRetryAfterMs('2', now)).toBe(2000);
    expect(parseRetryAfterMs(' 0 ', now)).toBe(0);
  });
  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  });
  it('clamps a huge value or a far date to the longest timer: "not in this run", not "no hint"', () => {
    for (const huge of ['99999999', '99999999999999999999', '9'.repeat(400)]) {
      expect(parseRetryAfterMs(huge, now)).toBe(maxTimerDelayMs);
    }
    expect(parseRetryAfterMs('Fri, 01 Jan 9999 00:00:00 GMT', now)).toBe(maxTimerDelayMs);
  });
  it('ignores garbage instead of throwing', () => {
    for (const bad of [undefined, '', '-1', '1.5', 'soon']) {
      expect(parseRetryAfterMs(bad, now)).toBeUndefined();
    }
  });
});
