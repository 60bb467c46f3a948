import { describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../core/errors/overloaded-error.js';
import { RateLimitedError } from '../core/errors/rate-limited-error.js';
import { DeadlineExceededError } from '../core/errors/rejected-error.js';
import { settle } from './settle-rule.js';

const facts = { redelivered: false, remainingMs: 10_000, defaultRetryAfterMs: 1_000 };
const failed = (error: unknown) => ({ ok: false, error, expired: false }) as const;

describe('settle', () => {
  it('acks a success', () => {
    expect(settle({ ok: true }, facts)).toEqual({ action: 'ack' });
  });

  it('requeues a plain failure once, then dead-letters it', () => {
    expect(settle(failed(new Error('x')), facts)).toEqual({ action: 'requeue', afterMs: 0 });
    expect(settle(failed(new Error('x')), { ...facts, redelivered: true })).toEqual({
      action: 'dead-letter',
      reason: 'failed',
    });
  });

  it('holds a `later` refusal for its retryAfterMs, or dead-letters it if the deadline is sooner', () => {
    const later = new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 2_500 });
    expect(settle(failed(later), facts)).toEqual({ action: 'requeue', afterMs: 2_500 });
    expect(settle(failed(later), { ...facts, remainingMs: 2_000 })).toEqual({
      action: 'dead-letter',
      reason: 'expired',
    });
    // A limit's refusal carries retryAfterMs and no signal: later.
    expect(settle(failed(new RateLimitedError(300)), facts)).toEqual({
      action: 'requeue',
      afterMs: 300,
    });
    const noWait = new DependencyOverloadedError('busy', { signal: 'later' });
    expect(settle(failed(noWait), facts)).toEqual({ action: 'requeue', afterMs: 1_000 });
  });

  it('requeues `elsewhere` now and dead-letters `never`', () => {
    const elsewhere = new DependencyOverloadedError('x', { signal: 'elsewhere' });
    const never = new DependencyOverloadedError('x', { signal: 'never' });
    expect(settle(failed(elsewhere), facts)).toEqual({ action: 'requeue', afterMs: 0 });
    expect(settle(failed(elsewhere), { ...facts, redelivered: true })).toEqual({
      action: 'requeue',
      afterMs: 1_000,
    });
    expect(settle(failed(never), facts)).toEqual({ action: 'dead-letter', reason: 'refused' });
  });

  it('dead-letters whatever ends past the deadline, refusal or not', () => {
    const expired = { ok: false, error: new DeadlineExceededError(), expired: true } as const;
    expect(settle(expired, facts)).toEqual({ action: 'dead-letter', reason: 'expired' });
    expect(settle(failed(new Error('x')), { ...facts, remainingMs: 0 })).toEqual({
      action: 'dead-letter',
      reason: 'expired',
    });
  });
});
