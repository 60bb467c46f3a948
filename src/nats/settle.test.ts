import { describe, expect, it } from 'vitest';
import { BacklogFullError } from '../core/errors/backlog-full-error.js';
import { DependencyOverloadedError } from '../core/errors/overloaded-error.js';
import { RateLimitedError } from '../core/errors/rate-limited-error.js';
import { settle, type SettleFacts } from './settle.js';

const facts: SettleFacts = {
  deliveryCount: 1,
  lifeLeftMs: 10_000,
  retryDelayMs: 1_000,
  maxDeliveries: 3,
};
const failed = (error: unknown, expired = false) => ({ ok: false as const, error, expired });

describe('the NATS settle rule', () => {
  it('acks a success, even one that finished just past its life', () => {
    expect(settle({ ok: true }, { ...facts, lifeLeftMs: -5 })).toEqual({ action: 'ack' });
  });

  it('naks a refusal downstream with its retryAfterMs, or terms it when the message would be dead', () => {
    expect(settle(failed(new RateLimitedError(250)), facts)).toEqual({
      action: 'nak',
      delayMs: 250,
    });
    const later = new BacklogFullError({ by: 'broker', retryAfterMs: 400 });
    expect(settle(failed(later), facts)).toEqual({ action: 'nak', delayMs: 400 });
    expect(settle(failed(later), { ...facts, lifeLeftMs: 300 })).toEqual({
      action: 'term',
      reason: 'expired',
    });
  });

  it('elsewhere naks now, never terms refused', () => {
    const elsewhere = new DependencyOverloadedError('x', { signal: 'elsewhere' });
    expect(settle(failed(elsewhere), facts)).toEqual({ action: 'nak', delayMs: 0 });
    const never = new DependencyOverloadedError('x', { signal: 'never' });
    expect(settle(failed(never), facts)).toEqual({ action: 'term', reason: 'refused' });
  });

  it('a plain failure is redelivered after retryDelayMs until its last delivery, then termed', () => {
    expect(settle(failed(new Error('boom')), facts)).toEqual({ action: 'nak', delayMs: 1_000 });
    expect(settle(failed(new Error('boom')), { ...facts, deliveryCount: 3 })).toEqual({
      action: 'term',
      reason: 'failed',
    });
  });

  it('past its life: term expired; past its ack wait only: a failure', () => {
    expect(settle(failed(new Error('late'), true), { ...facts, lifeLeftMs: 0 })).toEqual({
      action: 'term',
      reason: 'expired',
    });
    expect(settle(failed(new RateLimitedError(5), true), facts)).toEqual({
      action: 'nak',
      delayMs: 1_000,
    });
  });
});
