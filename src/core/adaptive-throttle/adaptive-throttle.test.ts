import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { adaptiveThrottle, ownedAdaptiveThrottle } from './adaptive-throttle.js';

describe('adaptiveThrottle', () => {
  it('refuses nothing while the dependency accepts', () => {
    const throttle = adaptiveThrottle({ clock: createVirtualClock(), random: () => 0 });
    for (let i = 0; i < 2_000; i++) {
      expect(throttle.tryRequest().ok).toBe(true);
      throttle.recordAccept();
    }
    expect(throttle.rejectProbability()).toBe(0);
  });

  it('follows max(0, (requests − k·accepts) / (requests + 1))', () => {
    const throttle = adaptiveThrottle({
      clock: createVirtualClock(),
      random: () => 0.999,
      maxRejectProbability: 1,
      minRequests: 0,
    });
    for (let i = 0; i < 7; i++) throttle.recordRefusal();
    for (let i = 0; i < 3; i++) throttle.recordAccept();
    expect(throttle.rejectProbability()).toBeCloseTo((10 - 2 * 3) / 11, 12);
    for (let i = 0; i < 90; i++) throttle.recordRefusal();
    expect(throttle.rejectProbability()).toBeCloseTo((100 - 6) / 101, 12);
  });

  it('refuses with that probability, capped at maxRejectProbability, using the injected random', () => {
    let r = 0.5;
    const throttle = adaptiveThrottle({
      clock: createVirtualClock(),
      random: () => r,
      minRequests: 0,
    });
    for (let i = 0; i < 9; i++) throttle.recordRefusal(); // no accepts: p = 9/10
    expect(throttle.rejectProbability()).toBeCloseTo(0.9, 12);
    expect(throttle.tryRequest()).toEqual({ ok: false, rejectProbability: 0.9 });
    for (let i = 0; i < 1_000; i++) throttle.tryRequest(); // refused here: each one counts
    expect(throttle.rejectProbability()).toBe(0.9); // capped: one in ten still goes
    r = 0.95;
    expect(throttle.tryRequest().ok).toBe(true);
  });

  it('counts each criticality apart: shed sheddable work does not throttle critical work', () => {
    const throttle = adaptiveThrottle({ clock: createVirtualClock(), random: () => 0 });
    for (let i = 0; i < 100; i++) {
      if (throttle.tryRequest('sheddable').ok) throttle.recordRefusal('sheddable');
      if (throttle.tryRequest('critical').ok) throttle.recordAccept('critical');
    }
    expect(throttle.rejectProbability('sheddable')).toBe(0.9);
    expect(throttle.rejectProbability('critical')).toBe(0);
    expect(throttle.rejectProbability()).toBe(0); // critical is the default
    expect(() => throttle.tryRequest('urgent' as never)).toThrow(/`criticality`/);
  });

  it('forgets after the window, so a recovered dependency is called again', async () => {
    const clock = createVirtualClock();
    const throttle = adaptiveThrottle({ clock, windowMs: 10_000, random: () => 0 });
    for (let i = 0; i < 100; i++) if (throttle.tryRequest().ok) throttle.recordRefusal();
    expect(throttle.rejectProbability()).toBe(0.9);
    await clock.advance(10_000);
    expect(throttle.rejectProbability()).toBe(0);
  });

  it('never refuses a quiet client: nothing until the window holds minRequests requests', () => {
    const throttle = adaptiveThrottle({ clock: createVirtualClock(), random: () => 0 });
    for (let i = 0; i < 10; i++) {
      expect(throttle.tryRequest().ok).toBe(true);
      throttle.recordRefusal();
    }
    expect(throttle.rejectProbability()).toBe(0.9); // 10/11, capped
    expect(throttle.tryRequest().ok).toBe(false);
  });

  it('an owner may count by rank at its own readings, with the same decisions', async () => {
    const clock = createVirtualClock();
    const random = () => 0.3;
    const owned = ownedAdaptiveThrottle({ clock, random });
    const plain = adaptiveThrottle({ clock, random });
    const decisions: [boolean, boolean][] = [];
    for (let i = 0; i < 60; i++) {
      // rank 3 is 'sheddable': accepted one time in three, then the window moves on
      const a = owned.tryRequestAt(3, clock.now());
      const b = plain.tryRequest('sheddable');
      decisions.push([a.ok, b.ok]);
      if (a.ok && i % 3 === 0) {
        owned.recordAcceptAt(3, clock.now());
        plain.recordAccept('sheddable');
      } else if (a.ok) {
        owned.recordRefusalAt(3, clock.now());
        plain.recordRefusal('sheddable');
      }
      await clock.advance(700);
    }
    expect(decisions.filter(([a]) => !a).length).toBeGreaterThan(0);
    expect(decisions.every(([a, b]) => a === b)).toBe(true);
    expect(owned.rejectProbability('sheddable')).toBe(plain.rejectProbability('sheddable'));
    expect(owned.rejectProbability('critical')).toBe(0);
  });

  it('emits onReject', () => {
    const throttle = adaptiveThrottle({
      clock: createVirtualClock(),
      random: () => 0,
      minRequests: 1,
    });
    const seen: unknown[] = [];
    using _ = throttle.onReject((e) => seen.push(e));
    throttle.recordRefusal('sheddable');
    throttle.tryRequest('sheddable');
    expect(seen).toEqual([{ criticality: 'sheddable', rejectProbability: 0.5 }]);
  });

  it('a dependency with capacity C, offered any load, receives about min(load, k × C) per second', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 20 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 2_147_483_646 }),
        (capacity, overload, seed) => {
          let s = seed;
          const random = (): number => {
            s = (s * 48_271) % 2_147_483_647;
            return s / 2_147_483_647;
          };
          const clock = createVirtualClock();
          const throttle = adaptiveThrottle({ clock, random, maxRejectProbability: 1 });
          const offered = capacity * overload;
          let sentLate = 0;
          for (let second = 0; second < 300; second++) {
            let acceptedThisSecond = 0;
            for (let i = 0; i < offered; i++) {
              if (!throttle.tryRequest().ok) continue;
              if (second >= 150) sentLate++;
              if (acceptedThisSecond < capacity) {
                acceptedThisSecond++;
                throttle.recordAccept();
              } else {
                throttle.recordRefusal();
              }
            }
            clock.advanceSync(1_000);
          }
          // In steady state (after a full 2-minute window) the backend sees ≈ min(offered, 2C).
          const perSecond = sentLate / 150;
          const expected = Math.min(offered, 2 * capacity);
          expect(perSecond).toBeLessThanOrEqual(expected * 1.15 + 1);
          expect(perSecond).toBeGreaterThanOrEqual(expected * 0.85 - 1);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('counts nothing in flight: a burst to a healthy dependency is never refused, however large', () => {
    // Counted when sent, the burst's own requests would lead its accepts by the burst's size.
    const throttle = adaptiveThrottle({ clock: createVirtualClock(), random: () => 0 });
    for (let i = 0; i < 1_000; i++) expect(throttle.tryRequest().ok).toBe(true);
    for (let i = 0; i < 1_000; i++) throttle.recordAccept();
    expect(throttle.rejectProbability()).toBe(0);
  });

  it("ignores requests that ended without the dependency's word", () => {
    // A caller that gave up, or sent something malformed, records neither outcome.
    const throttle = adaptiveThrottle({ clock: createVirtualClock(), random: () => 0 });
    for (let i = 0; i < 500; i++) expect(throttle.tryRequest().ok).toBe(true);
    expect(throttle.rejectProbability()).toBe(0);
  });

  it('refuses bad options by name', () => {
    expect(() => adaptiveThrottle({ k: 0.5 })).toThrow(/`k`/);
    expect(() => adaptiveThrottle({ windowMs: 0 })).toThrow(/`windowMs`/);
    expect(() => adaptiveThrottle({ bucketMs: 1 })).toThrow(/`bucketMs`/);
    expect(() => adaptiveThrottle({ windowMs: 10, bucketMs: 100 })).toThrow(/`bucketMs`/);
    expect(() => adaptiveThrottle({ maxRejectProbability: 1.5 })).toThrow(/`maxRejectProbability`/);
    expect(() => adaptiveThrottle({ random: 'x' as never })).toThrow(/`random`/);
    expect(() => adaptiveThrottle({ minRequests: -1 })).toThrow(/`minRequests`/);
  });
});
