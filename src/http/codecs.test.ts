import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatDeadlineMs,
  parseAttempt,
  parseCriticality,
  parseDeadlineMs,
  parseRetryAfter,
  parseRetrySignal,
  retryAfterSeconds,
} from './codecs.js';

const hostile = [
  '',
  ' ',
  '-1',
  '-0',
  '1.5',
  'NaN',
  'Infinity',
  '1e309',
  '1e3',
  '0x10',
  '12abc',
  '1, 2',
  '100,100',
  'x'.repeat(10_000),
  '9'.repeat(400),
  '\u0000',
  '١٢٣', // Arabic-Indic digits
];

describe('request header codecs', () => {
  it('Spillway-Deadline: whole ms from 0 to one day; anything else is absent', () => {
    expect(parseDeadlineMs('250')).toBe(250);
    expect(parseDeadlineMs(' 0 ')).toBe(0);
    expect(parseDeadlineMs('86400000')).toBe(86_400_000);
    expect(parseDeadlineMs('86400001')).toBeUndefined();
    expect(parseDeadlineMs(['250'])).toBe(250);
    expect(parseDeadlineMs(['250', '300'])).toBeUndefined(); // duplicated field: ambiguous
    expect(parseDeadlineMs(undefined)).toBeUndefined();
    for (const bad of hostile) expect(parseDeadlineMs(bad)).toBeUndefined();
    expect(formatDeadlineMs(12.9)).toBe('12');
    expect(formatDeadlineMs(-4)).toBe('0');
  });

  it('Spillway-Criticality: the four names, case-insensitive; anything else is absent', () => {
    expect(parseCriticality('sheddable')).toBe('sheddable');
    expect(parseCriticality('Critical-Plus')).toBe('critical-plus');
    for (const bad of [...hostile, 'critical,critical', 'urgent', 'critical-plus-plus']) {
      expect(parseCriticality(bad)).toBeUndefined();
    }
  });

  it('Spillway-Attempt: 1 to 100', () => {
    expect(parseAttempt('1')).toBe(1);
    expect(parseAttempt('100')).toBe(100);
    for (const bad of [...hostile, '0', '101']) expect(parseAttempt(bad)).toBeUndefined();
  });

  it('Spillway-Retry: later | elsewhere | never', () => {
    expect(parseRetrySignal('never')).toBe('never');
    expect(parseRetrySignal('Elsewhere')).toBe('elsewhere');
    for (const bad of [...hostile, 'soon']) expect(parseRetrySignal(bad)).toBeUndefined();
  });

  it('no codec throws on any string or list', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 200 }), fc.array(fc.string(), { maxLength: 3 })),
        (v) => {
          parseDeadlineMs(v);
          parseCriticality(v);
          parseAttempt(v);
          parseRetrySignal(v);
          const ms = parseRetryAfter(v, 1_700_000_000_000);
          if (ms !== undefined) {
            expect(ms).toBeGreaterThanOrEqual(0);
            expect(ms).toBeLessThanOrEqual(86_400_000);
          }
        },
      ),
    );
  });
});

describe('Retry-After', () => {
  const now = Date.parse('Tue, 01 Dec 2026 12:00:00 GMT');

  it('formats whole seconds, rounded up, never 0', () => {
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
    expect(retryAfterSeconds(Number.NaN)).toBe(1);
    expect(retryAfterSeconds(-5)).toBe(1);
  });

  it('parses delay-seconds and HTTP-dates; clamps or ignores hostile values', () => {
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 12:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', now)).toBe(0); // a date in the past: now
    expect(parseRetryAfter('99999999999', now)).toBe(86_400_000); // clamped to a day
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter('abc', now)).toBeUndefined();
    expect(parseRetryAfter('1,2,3,4,5,6,7,8,9,10', now)).toBeUndefined();
    expect(parseRetryAfter('2.5', now)).toBeUndefined();
    expect(parseRetryAfter('1e309', now)).toBeUndefined();
    expect(parseRetryAfter('2026-12-01', now)).toBeUndefined();
  });
});
