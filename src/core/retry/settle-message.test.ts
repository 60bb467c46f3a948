import { describe, expect, it } from 'vitest';
import { BacklogFullError } from '../errors/backlog-full-error.js';
import { DependencyOverloadedError } from '../errors/overloaded-error.js';
import { RateLimitedError } from '../errors/rate-limited-error.js';
import { DeadlineExceededError, QueueFullError } from '../errors/rejected-error.js';
import { messageRefusalOf, settleMessage, type MessageFacts } from './settle-message.js';

const facts: MessageFacts = {
  lifeLeftMs: 10_000,
  lastDelivery: false,
  failureRetryMs: 500,
  refusalRetryMs: 1_000,
  elsewhereNow: true,
};
const failed = (error: unknown, expired = false) => ({ ok: false as const, error, expired });

describe('settleMessage', () => {
  it('acks a success, even one that finished past its life', () => {
    expect(settleMessage({ ok: true }, { ...facts, lifeLeftMs: -5 })).toEqual({ action: 'ack' });
  });

  it('gives up `expired` whatever fails past the message life, refusal or not', () => {
    for (const error of [new Error('x'), new RateLimitedError(5), new DeadlineExceededError()]) {
      expect(settleMessage(failed(error), { ...facts, lifeLeftMs: 0 })).toEqual({
        action: 'give-up',
        reason: 'expired',
      });
    }
  });

  it('retries `later` after its retryAfterMs (else refusalRetryMs), or gives up if the message would be dead by then', () => {
    const later = new BacklogFullError({ by: 'broker', retryAfterMs: 400 });
    expect(settleMessage(failed(later), facts)).toEqual({ action: 'retry', afterMs: 400 });
    expect(settleMessage(failed(later), { ...facts, lifeLeftMs: 400 })).toEqual({
      action: 'give-up',
      reason: 'expired',
    });
    const noWait = new DependencyOverloadedError('busy', { signal: 'later' });
    expect(settleMessage(failed(noWait), facts)).toEqual({ action: 'retry', afterMs: 1_000 });
    // A refusal is not a failure: it is retried on the last delivery too.
    expect(settleMessage(failed(noWait), { ...facts, lastDelivery: true })).toEqual({
      action: 'retry',
      afterMs: 1_000,
    });
  });

  it('retries `elsewhere` now, or as `later` where the broker says not now; gives up `never` as refused', () => {
    const elsewhere = new DependencyOverloadedError('x', { signal: 'elsewhere' });
    expect(settleMessage(failed(elsewhere), facts)).toEqual({ action: 'retry', afterMs: 0 });
    expect(settleMessage(failed(elsewhere), { ...facts, elsewhereNow: false })).toEqual({
      action: 'retry',
      afterMs: 1_000,
    });
    const never = new DependencyOverloadedError('x', { signal: 'never' });
    expect(settleMessage(failed(never), facts)).toEqual({ action: 'give-up', reason: 'refused' });
  });

  it('retries a plain failure after failureRetryMs until its last delivery, then gives it up `failed`', () => {
    expect(settleMessage(failed(new Error('boom')), facts)).toEqual({
      action: 'retry',
      afterMs: 500,
    });
    expect(settleMessage(failed(new Error('boom')), { ...facts, lastDelivery: true })).toEqual({
      action: 'give-up',
      reason: 'failed',
    });
  });

  it('takes a handler that ran out of time for a plain failure, whatever it threw', () => {
    expect(settleMessage(failed(new RateLimitedError(5), true), facts)).toEqual({
      action: 'retry',
      afterMs: 500,
    });
  });
});

describe('messageRefusalOf', () => {
  it('reads Spillway refusals, including from another installed copy, and nothing else', () => {
    expect(messageRefusalOf(new QueueFullError({ retryAfterMs: 40 }))).toEqual({
      signal: 'later',
      retryAfterMs: 40,
    });
    expect(messageRefusalOf(new QueueFullError())).toBeUndefined();
    const foreign = Object.assign(new Error('other copy'), { signal: 'never' });
    Object.defineProperty(foreign, Symbol.for('spillway.error'), { value: true });
    expect(messageRefusalOf(foreign)).toEqual({ signal: 'never', retryAfterMs: undefined });
    expect(messageRefusalOf(Object.assign(new Error('x'), { retryAfterMs: 5 }))).toBeUndefined();
    expect(messageRefusalOf(null)).toBeUndefined();
    // An HTTP client's 503 is a refusal too (core's classifyError).
    expect(
      messageRefusalOf(Object.assign(new Error('x'), { status: 503, retryAfterMs: 70 })),
    ).toEqual({ signal: 'later', retryAfterMs: 70 });
  });
});
