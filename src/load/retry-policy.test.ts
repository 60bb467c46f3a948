import { describe, expect, it } from 'vitest';
import { formatRetryPolicy, parseRetryPolicy, retryDelayMs } from './retry-policy.js';

const end = (over: Partial<Parameters<typeof retryDelayMs>[1]> = {}) => ({
  attempt: 1,
  outcome: 'rejected' as const,
  status: 503,
  retryAfterMs: undefined,
  ...over,
});

describe('retryDelayMs', () => {
  it('none never retries', () => {
    expect(retryDelayMs({ kind: 'none' }, end(), Math.random)).toBeUndefined();
  });

  it('immediate retries at once, up to N extra attempts, ignoring Retry-After', () => {
    const policy = { kind: 'immediate', retries: 2 } as const;
    expect(retryDelayMs(policy, end({ retryAfterMs: 5000 }), Math.random)).toBe(0);
    expect(retryDelayMs(policy, end({ attempt: 2 }), Math.random)).toBe(0);
    expect(retryDelayMs(policy, end({ attempt: 3 }), Math.random)).toBeUndefined();
  });

  it('retries only what a caller would: 429/503, 5xx, timeouts and network errors', () => {
    const policy = { kind: 'immediate', retries: 1 } as const;
    expect(retryDelayMs(policy, end({ outcome: 'timeout', status: 0 }), Math.random)).toBe(0);
    expect(retryDelayMs(policy, end({ outcome: 'network', status: 0 }), Math.random)).toBe(0);
    expect(retryDelayMs(policy, end({ outcome: 'error', status: 502 }), Math.random)).toBe(0);
    expect(retryDelayMs(policy, end({ outcome: 'error', status: 404 }), Math.random)).toBe(
      undefined,
    );
    expect(retryDelayMs(policy, end({ outcome: 'ok', status: 200 }), Math.random)).toBe(undefined);
  });

  it('backoff: full jitter under a doubling ceiling, never sooner than Retry-After', () => {
    const policy = { kind: 'backoff', retries: 5, baseMs: 100, maxDelayMs: 1000 } as const;
    expect(retryDelayMs(policy, end(), () => 0.5)).toBe(50);
    expect(retryDelayMs(policy, end({ attempt: 3 }), () => 0.5)).toBe(200);
    expect(retryDelayMs(policy, end({ attempt: 5 }), () => 0.999)).toBeCloseTo(999);
    expect(retryDelayMs(policy, end({ retryAfterMs: 2000 }), () => 0.5)).toBe(2000);
  });
});

describe('parseRetryPolicy', () => {
  it('round-trips every form', () => {
    for (const text of ['none', 'immediate:3', 'backoff:2', 'backoff:4:250']) {
      expect(formatRetryPolicy(parseRetryPolicy(text))).toBe(text);
    }
  });

  it('names the option and the value on bad input', () => {
    for (const bad of [
      '',
      'always',
      'immediate',
      'immediate:0',
      'immediate:x',
      'backoff:2:-1',
      'none:1',
      'immediate:1:2',
    ]) {
      expect(() => parseRetryPolicy(bad, '--retry')).toThrow(/Expected `--retry` to be 'none'/);
    }
  });
});
