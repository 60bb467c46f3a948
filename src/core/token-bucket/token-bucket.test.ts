import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { tokenBucket } from './token-bucket.js';

describe('tokenBucket', () => {
  it('starts full, admits burst at once, then refuses with the exact wait', () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 10, burst: 3, clock });
    expect(bucket.tryTake()).toEqual({ ok: true, remaining: 2 });
    expect(bucket.tryTake()).toEqual({ ok: true, remaining: 1 });
    expect(bucket.tryTake()).toEqual({ ok: true, remaining: 0 });
    expect(bucket.tryTake()).toEqual({ ok: false, retryAfterMs: 100 });
    expect(bucket.tryTake(2)).toEqual({ ok: false, retryAfterMs: 200 });
  });

  it('refills continuously: waiting exactly retryAfterMs succeeds, 1 ms less does not', () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 3, burst: 2, clock });
    bucket.tryTake(2);
    clock.advanceSync(100); // 0.3 tokens
    const refused = bucket.tryTake();
    expect(refused).toEqual({ ok: false, retryAfterMs: 234 }); // 0.7 tokens at 3/s = 233.3 ms, rounded up
    clock.advanceSync(233);
    expect(bucket.tryTake().ok).toBe(false);
    clock.advanceSync(1);
    expect(bucket.tryTake().ok).toBe(true);
  });

  it('a refused take consumes nothing', () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 1, burst: 5, clock });
    bucket.tryTake(4);
    for (let i = 0; i < 100; i++) expect(bucket.tryTake(2).ok).toBe(false);
    expect(bucket.available).toBe(1);
    expect(bucket.tryTake(1)).toEqual({ ok: true, remaining: 0 });
  });

  it('never holds more than burst', () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 1_000, burst: 4, clock });
    clock.advanceSync(60_000);
    expect(bucket.available).toBe(4);
  });

  it('n > burst is an argument error (it could never succeed), as are 0, -1, NaN and fractions', () => {
    const bucket = tokenBucket({ ratePerSec: 1, burst: 5, clock: createVirtualClock() });
    expect(() => bucket.tryTake(6)).toThrow(/at most burst \(5\); this take could never succeed/);
    for (const bad of [0, -1, Number.NaN, 1.5, Infinity]) {
      expect(() => bucket.tryTake(bad)).toThrow(SpillwayArgumentError);
    }
    expect(() => bucket.tryTake('1' as unknown as number)).toThrow(/`n` to be a positive integer/);
  });

  it('invalid options fail at construction, naming the option and the value', () => {
    const clock = createVirtualClock();
    expect(() => tokenBucket({ ratePerSec: -1, burst: 1, clock })).toThrow(
      /Expected `ratePerSec` to be a finite number greater than 0, got -1 \(number\)/,
    );
    expect(() => tokenBucket({ ratePerSec: 1, burst: -1, clock })).toThrow(
      /Expected `burst` to be a positive integer, got -1 \(number\)/,
    );
    expect(() => tokenBucket({ ratePerSec: Infinity, burst: 1, clock })).toThrow(
      SpillwayConfigError,
    );
    expect(() => tokenBucket({ ratePerSec: Number.NaN, burst: 1, clock })).toThrow(/NaN/);
    expect(() => tokenBucket({ ratePerSec: 1, burst: 1.5, clock })).toThrow(/`burst`/);
    expect(() => tokenBucket({ ratePerSec: 1, burst: 1, clock: {} as never })).toThrow(/`clock`/);
    expect(() => tokenBucket(undefined as never)).toThrow(/`ratePerSec`/);
  });

  it('reports refusals to listeners, and only builds the event when someone listens', () => {
    const clock = createVirtualClock();
    const bucket = tokenBucket({ ratePerSec: 10, burst: 1, clock });
    const seen: number[] = [];
    const sub = bucket.onThrottle((e) => seen.push(e.retryAfterMs));
    bucket.tryTake();
    bucket.tryTake();
    sub.dispose();
    bucket.tryTake();
    expect(seen).toEqual([100]);
  });
});
