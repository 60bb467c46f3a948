import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoff } from './backoff.js';

describe('backoff', () => {
  it('full jitter: the n-th retry waits U(0, min(cap, base × 2^n))', () => {
    const b = backoff({ baseMs: 100, capMs: 1_000, random: () => 0.5 });
    expect(b.next({ retry: 0 })).toEqual({ ok: true, delayMs: 50 });
    expect(b.next({ retry: 1 })).toEqual({ ok: true, delayMs: 100 });
    expect(b.next({ retry: 3 })).toEqual({ ok: true, delayMs: 400 });
    expect(b.next({ retry: 4 })).toEqual({ ok: true, delayMs: 500 }); // capped at 1000
    expect(b.next({ retry: 1e9 })).toEqual({ ok: true, delayMs: 500 });
  });

  it('never sooner than Retry-After: the jitter goes on top of it', () => {
    const b = backoff({ random: () => 0.25 });
    expect(b.next({ retry: 0, retryAfterMs: 1_000 })).toEqual({ ok: true, delayMs: 1_025 });
    expect(b.next({ retry: 0, retryAfterMs: 0 })).toEqual({ ok: true, delayMs: 25 });
  });

  it('fails now instead of sleeping past the deadline', () => {
    const b = backoff({ random: () => 0.5 });
    expect(b.next({ retry: 0, retryAfterMs: 1_000, remainingMs: 900 })).toEqual({
      ok: false,
      reason: 'deadline',
    });
    expect(b.next({ retry: 0, remainingMs: 50 })).toEqual({ ok: false, reason: 'deadline' });
    expect(b.next({ retry: 0, remainingMs: 51 })).toEqual({ ok: true, delayMs: 50 });
    expect(b.next({ retry: 0, remainingMs: 0 })).toEqual({ ok: false, reason: 'deadline' });
  });

  it('does not wait for a Retry-After longer than maxRetryAfterMs', () => {
    const b = backoff({ maxRetryAfterMs: 5_000 });
    expect(b.next({ retry: 0, retryAfterMs: 86_400_000 })).toEqual({
      ok: false,
      reason: 'retry-after',
    });
    expect(b.next({ retry: 0, retryAfterMs: Infinity })).toEqual({
      ok: false,
      reason: 'retry-after',
    });
  });

  it('ignores hostile hints and a broken random source: never negative, never endless', () => {
    for (const random of [() => -1, () => 7, () => Number.NaN, () => Infinity]) {
      const b = backoff({ random });
      for (const retryAfterMs of [-1, Number.NaN, -Infinity, undefined]) {
        const d = b.next({ retry: 2, retryAfterMs });
        expect(d.ok).toBe(true);
        if (d.ok) {
          expect(d.delayMs).toBeGreaterThanOrEqual(0);
          expect(d.delayMs).toBeLessThanOrEqual(400);
        }
      }
    }
  });

  it('bounds: for any input the wait is within [hint, hint + min(cap, base·2^n)) and before the deadline', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.nat({ max: 10 }),
        fc.option(fc.double({ min: -10, max: 100_000, noNaN: true }), { nil: undefined }),
        fc.option(fc.double({ min: 0, max: 100_000, noNaN: true }), { nil: undefined }),
        (baseMs, extraCap, r, retry, retryAfterMs, remainingMs) => {
          const capMs = baseMs + extraCap;
          const b = backoff({ baseMs, capMs, random: () => r });
          const d = b.next({ retry, retryAfterMs, remainingMs });
          const hint = retryAfterMs !== undefined && retryAfterMs >= 0 ? retryAfterMs : 0;
          if (!d.ok) {
            if (d.reason === 'retry-after') expect(hint).toBeGreaterThan(30_000);
            else expect(remainingMs).toBeDefined();
            return;
          }
          expect(d.delayMs).toBeGreaterThanOrEqual(hint);
          expect(d.delayMs - hint).toBeLessThanOrEqual(Math.min(capMs, baseMs * 2 ** retry));
          expect(Number.isFinite(d.delayMs)).toBe(true);
          if (remainingMs !== undefined) expect(d.delayMs).toBeLessThan(remainingMs);
        },
      ),
    );
  });

  it('refuses bad options by name', () => {
    expect(() => backoff({ baseMs: 0 })).toThrow(/`baseMs`/);
    expect(() => backoff({ capMs: 50 })).toThrow(/`capMs`/);
    expect(() => backoff({ maxRetryAfterMs: -1 })).toThrow(/`maxRetryAfterMs`/);
    expect(() => backoff({ random: 4 as never })).toThrow(/`random`/);
  });
});
