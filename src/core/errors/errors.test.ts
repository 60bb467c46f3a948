import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCodes } from './codes.js';
import { SpillwayConfigError } from './config-error.js';
import { RateLimitedError } from './rate-limited-error.js';
import {
  DeadlineExceededError,
  QueueFullError,
  RejectedError,
  ShedError,
  rejectionError,
} from './rejected-error.js';
import { SpillwayError, isSpillwayError } from './spillway-error.js';

/** What an error from a second installed copy of Spillway looks like to this copy. */
function fromOtherCopy(code: string): Error {
  const e = new Error('from another copy');
  Object.defineProperty(e, Symbol.for('spillway.error'), { value: true });
  Object.assign(e, { code });
  return e;
}

describe('errors', () => {
  it('carry stable codes, names and machine fields', () => {
    const e = new QueueFullError({ retryAfterMs: 250 });
    expect(e.code).toBe('SPILLWAY_E_QUEUE_FULL');
    expect(e.name).toBe('QueueFullError');
    expect(e.reason).toBe('queue-full');
    expect(e.retryAfterMs).toBe(250);
    expect(e.message).toContain('docs/errors.md#spillway_e_queue_full');
    expect(new RateLimitedError(1200).retryAfterMs).toBe(1200);
  });

  it('instanceof works by brand and code, including for errors from another installed copy', () => {
    const foreign = fromOtherCopy(errorCodes.shed);
    expect(foreign instanceof SpillwayError).toBe(true);
    expect(foreign instanceof ShedError).toBe(true);
    expect(foreign instanceof RejectedError).toBe(true);
    expect(foreign instanceof QueueFullError).toBe(false);
    expect(foreign instanceof RateLimitedError).toBe(false);
    expect(isSpillwayError(foreign)).toBe(true);
    expect(isSpillwayError(new Error('plain'))).toBe(false);
    expect(new RateLimitedError(1) instanceof RejectedError).toBe(false);
    expect(new DeadlineExceededError() instanceof Error).toBe(true);
  });

  it('refusals and other outcomes of load carry no stack frames; mistakes in the code keep theirs', () => {
    const frames = (e: Error) => (e.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
    const refusal = new QueueFullError({ retryAfterMs: 5 });
    expect(refusal.stack).toBe(`QueueFullError: ${refusal.message}`);
    expect(frames(new RateLimitedError(1))).toEqual([]);
    expect(frames(new DeadlineExceededError())).toEqual([]);
    expect(frames(new SpillwayConfigError('burst', 'a positive integer', -1))).not.toEqual([]);
    // The depth the application set is left as it was, whatever it is.
    const before = Error.stackTraceLimit;
    try {
      Error.stackTraceLimit = 3;
      new ShedError();
      expect(Error.stackTraceLimit).toBe(3);
      expect(frames(new Error('plain')).length).toBe(3);
    } finally {
      Error.stackTraceLimit = before;
    }
  });

  it('rejectionError maps every reason to its class', () => {
    expect(rejectionError('deadline')).toBeInstanceOf(DeadlineExceededError);
    expect(rejectionError('shed', { retryAfterMs: 5 }).retryAfterMs).toBe(5);
  });

  it('config errors name the option and echo the value with its type', () => {
    const e = new SpillwayConfigError('burst', 'a positive integer', -1);
    expect(e.message).toMatch(/^Expected `burst` to be a positive integer, got -1 \(number\)/);
    expect(e.option).toBe('burst');
    expect(new SpillwayConfigError('x', 'y', 'a'.repeat(500)).message.length).toBeLessThan(200);
  });

  it('docs/errors.md has one heading per code, and nothing else', () => {
    const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
    const headings = [...doc.matchAll(/^## `(SPILLWAY_E_[A-Z_]+)`/gm)].map((m) => m[1]);
    expect(headings.sort()).toEqual(Object.values(errorCodes).sort());
  });
});
