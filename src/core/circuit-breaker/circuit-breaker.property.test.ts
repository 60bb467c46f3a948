import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { circuitBreaker, type BreakerCall } from './circuit-breaker.js';
import type { TripPolicy } from './trip-policy.js';

type Op =
  | { kind: 'call' }
  | { kind: 'settle'; pick: number; outcome: 'success' | 'failure' | 'ignore' }
  | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: 'call' }),
  fc.record({
    kind: fc.constant('settle' as const),
    pick: fc.nat(),
    outcome: fc.constantFrom('success' as const, 'failure' as const, 'ignore' as const),
  }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) }),
);

const trip: fc.Arbitrary<TripPolicy> = fc.oneof(
  fc.record({
    kind: fc.constant('consecutive' as const),
    failures: fc.integer({ min: 1, max: 4 }),
  }),
  fc.record({
    kind: fc.constant('count' as const),
    size: fc.integer({ min: 1, max: 8 }),
    minimumCalls: fc.integer({ min: 1, max: 8 }),
    failureRatio: fc.double({ min: 0.1, max: 1, noNaN: true }),
  }),
  fc.record({
    kind: fc.constant('time' as const),
    windowMs: fc.integer({ min: 100, max: 2_000 }),
    minimumCalls: fc.integer({ min: 1, max: 8 }),
    failureRatio: fc.double({ min: 0.1, max: 1, noNaN: true }),
  }),
);

describe('circuitBreaker state machine', () => {
  it('for any sequence of calls, outcomes and time: probes stay bounded, open refuses, only failures open it', () => {
    fc.assert(
      fc.property(
        trip,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 50, max: 500 }),
        fc.array(op, { maxLength: 120 }),
        (policy, probes, openMs, ops) => {
          const clock = createVirtualClock();
          const breaker = circuitBreaker({ clock, trip: policy, openMs, halfOpenProbes: probes });
          // A model of the half-open phase: which calls are its probes, how many are out.
          const outstanding: { call: BreakerCall; phase: number }[] = [];
          let phase = 0;
          let phaseStart = 0;
          let probesOut = 0;
          let openedAt = -Infinity;
          using _ = breaker.onStateChange((e) => {
            expect([
              'closed->open',
              'open->half-open',
              'half-open->open',
              'half-open->closed',
            ]).toContain(`${e.from}->${e.to}`);
            phase++;
            if (e.to === 'open') openedAt = clock.now();
            if (e.to === 'half-open') {
              phaseStart = clock.now();
              probesOut = 0;
              // Never half-open before the cool-down is over.
              expect(clock.now() - openedAt).toBeGreaterThanOrEqual(openMs);
            }
          });
          for (const o of ops) {
            if (o.kind === 'advance') {
              clock.advanceSync(o.ms);
            } else if (o.kind === 'call') {
              const before = breaker.state;
              const d = breaker.tryAcquire();
              const state = breaker.state;
              if (before === 'closed') expect(d.ok).toBe(true);
              if (!d.ok) {
                expect(state).not.toBe('closed');
                if (d.state === 'open') expect(d.retryAfterMs).toBeGreaterThan(0);
                continue;
              }
              expect(state).not.toBe('open');
              if (state === 'half-open') {
                if (probesOut >= probes) {
                  // Only a restart after a whole cool-down may hand out more probes.
                  expect(clock.now() - phaseStart).toBeGreaterThanOrEqual(openMs);
                  phase++;
                  phaseStart = clock.now();
                  probesOut = 0;
                }
                probesOut++;
                expect(probesOut).toBeLessThanOrEqual(probes);
              }
              outstanding.push({ call: d.call, phase });
            } else if (outstanding.length > 0) {
              const [entry] = outstanding.splice(o.pick % outstanding.length, 1);
              const before = breaker.state;
              const stale = entry!.phase !== phase;
              entry!.call[o.outcome]();
              const after = breaker.state;
              if (stale) {
                expect(after).toBe(before); // a stale call never moves the breaker
              } else if (before === 'half-open' && o.outcome === 'ignore') {
                probesOut--; // an ignored probe gives its slot back
              }
              // Only a failure opens the breaker (slow calls are not configured here).
              if (before !== 'open' && after === 'open') expect(o.outcome).toBe('failure');
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('half-open admits exactly halfOpenProbes calls until they report or a cool-down passes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 50 }),
        (probes, tries) => {
          const clock = createVirtualClock();
          const breaker = circuitBreaker({
            clock,
            openMs: 100,
            halfOpenProbes: probes,
            trip: { kind: 'consecutive', failures: 1 },
          });
          const first = breaker.tryAcquire();
          if (first.ok) first.call.failure();
          clock.advanceSync(100);
          let admitted = 0;
          for (let i = 0; i < probes + tries; i++) if (breaker.tryAcquire().ok) admitted++;
          expect(admitted).toBe(probes);
        },
      ),
    );
  });
});
