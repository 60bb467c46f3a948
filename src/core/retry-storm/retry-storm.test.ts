import { describe, expect, it } from 'vitest';
import { SpillwayConfigError } from '../errors/config-error.js';
import { createVirtualClock, type VirtualClock } from '../../testing/virtual-clock.js';
import {
  retryStorm,
  retryStormSettings,
  type RetryStorm,
  type RetryStormChange,
} from './retry-storm.js';

/**
 * `ms` of traffic, one round every 10 ms: each round sends `firsts` first tries and, for each
 * entry of `retries`, that many arrivals of that attempt (`{ 2: 1, 3: 1 }`).
 */
function traffic(
  storm: RetryStorm,
  clock: VirtualClock,
  shape: { ms: number; firsts: number; retries?: Record<number, number> },
): void {
  for (let t = 0; t < shape.ms; t += 10) {
    for (let i = 0; i < shape.firsts; i++) storm.record(1);
    for (const [attempt, n] of Object.entries(shape.retries ?? {})) {
      for (let i = 0; i < n; i++) storm.record(Number(attempt));
    }
    clock.advanceSync(10);
  }
}

function watched(storm: RetryStorm): RetryStormChange[] {
  const seen: RetryStormChange[] = [];
  storm.onChange((change) => seen.push(change));
  return seen;
}

describe('retryStorm', () => {
  it('a spike of first tries, however large, is not a storm', () => {
    const clock = createVirtualClock();
    const storm = retryStorm({ clock });
    const seen = watched(storm);
    // 1,000/s of ordinary traffic with one in eleven a retry, then 100,000 first tries in 100 ms.
    traffic(storm, clock, { ms: 5_000, firsts: 10, retries: { 2: 1 } });
    traffic(storm, clock, { ms: 100, firsts: 10_000 });
    traffic(storm, clock, { ms: 5_000, firsts: 10, retries: { 2: 1 } });
    expect(storm.active).toBe(false);
    expect(seen).toEqual([]);
  });

  it('a storm of second and third attempts flips it, and it flips back once the storm passes', () => {
    const clock = createVirtualClock();
    const storm = retryStorm({ clock });
    const seen = watched(storm);
    traffic(storm, clock, { ms: 5_000, firsts: 1 });
    expect(storm.active).toBe(false);
    // The pool refuses: every first try comes back twice, as callers with three attempts do.
    traffic(storm, clock, { ms: 10_000, firsts: 1, retries: { 2: 1, 3: 1 } });
    expect(storm.active).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.active).toBe(true);
    expect(seen[0]!.retryShare).toBeGreaterThan(0.5);
    expect(seen[0]!.arrivals).toBeGreaterThanOrEqual(20);
    // Told to stop, callers stop retrying: the share falls, and the storm is left.
    traffic(storm, clock, { ms: 10_000, firsts: 1 });
    expect(storm.active).toBe(false);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.active).toBe(false);
    expect(seen[1]!.retryShare).toBeLessThanOrEqual(0.3);
  });

  it('enters within a few half-lives of the storm starting, leaves within a few of its end', () => {
    const clock = createVirtualClock();
    const storm = retryStorm({ halfLifeMs: 1_000, clock });
    traffic(storm, clock, { ms: 5_000, firsts: 1 });
    let entered = -1;
    for (let t = 0; t < 10_000 && entered < 0; t += 10) {
      traffic(storm, clock, { ms: 10, firsts: 1, retries: { 2: 1, 3: 1 } });
      if (storm.active) entered = t;
    }
    expect(entered).toBeGreaterThan(0);
    expect(entered).toBeLessThan(2_000);
    let left = -1;
    for (let t = 0; t < 10_000 && left < 0; t += 10) {
      traffic(storm, clock, { ms: 10, firsts: 1 });
      if (!storm.active) left = t;
    }
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(3_000);
  });

  it('a share that hovers between the thresholds does not flip it either way', () => {
    const clock = createVirtualClock();
    const storm = retryStorm({ retryShare: 0.5, leaveShare: 0.3, clock });
    const seen = watched(storm);
    // 40 % retries: below the way in.
    traffic(storm, clock, { ms: 10_000, firsts: 3, retries: { 2: 2 } });
    expect(storm.active).toBe(false);
    traffic(storm, clock, { ms: 10_000, firsts: 1, retries: { 2: 2 } });
    expect(storm.active).toBe(true);
    // 40 % again: above the way out.
    traffic(storm, clock, { ms: 10_000, firsts: 3, retries: { 2: 2 } });
    expect(storm.active).toBe(true);
    expect(seen.map((c) => c.active)).toEqual([true]);
  });

  it('too few arrivals are no evidence, and a quiet spell ends a storm', () => {
    const clock = createVirtualClock();
    const storm = retryStorm({ minArrivals: 50, clock });
    // Only retries, but about 29 of decayed weight (10/s over a 2 s half-life).
    for (let i = 0; i < 200; i++) {
      storm.record(2);
      clock.advanceSync(100);
    }
    expect(storm.histogram.retryShare).toBe(1);
    expect(storm.active).toBe(false);
    traffic(storm, clock, { ms: 5_000, firsts: 0, retries: { 2: 1 } });
    expect(storm.active).toBe(true);
    clock.advanceSync(60_000);
    storm.record(2);
    expect(storm.active).toBe(false);
  });

  it('refuses bad options at construction, naming the option (with a prefix) and the value', () => {
    for (const [options, option] of [
      [{ retryShare: 0 }, 'retryShare'],
      [{ retryShare: 1 }, 'retryShare'],
      [{ retryShare: '0.5' }, 'retryShare'],
      [{ leaveShare: 0.5 }, 'leaveShare'],
      [{ retryShare: 0.4, leaveShare: 0.45 }, 'leaveShare'],
      [{ leaveShare: -0.1 }, 'leaveShare'],
      [{ minArrivals: 0 }, 'minArrivals'],
      [{ minArrivals: Number.POSITIVE_INFINITY }, 'minArrivals'],
      [{ halfLifeMs: -1 }, 'halfLifeMs'],
    ] as const) {
      expect(() => retryStorm(options as never)).toThrow(SpillwayConfigError);
      try {
        retryStormSettings(options as never, 'api.retryStorm.');
      } catch (error) {
        expect((error as SpillwayConfigError).option).toBe(`api.retryStorm.${option}`);
        continue;
      }
      expect.unreachable(option);
    }
    expect(() => retryStorm(7 as never)).toThrow(SpillwayConfigError);
    expect(retryStormSettings(undefined)).toEqual({
      retryShare: 0.5,
      leaveShare: 0.3,
      minArrivals: 20,
      halfLifeMs: 2_000,
    });
  });
});
