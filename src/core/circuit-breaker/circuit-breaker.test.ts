import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { CircuitOpenError } from '../errors/circuit-open-error.js';
import { QueueFullError } from '../errors/rejected-error.js';
import { RetryBudgetExhaustedError } from '../errors/retry-budget-error.js';
import { ThrottledError } from '../errors/throttled-error.js';
import {
  circuitBreaker,
  ownedCircuitBreaker,
  type BreakerCall,
  type CircuitBreaker,
} from './circuit-breaker.js';

function admit(breaker: CircuitBreaker): BreakerCall {
  const d = breaker.tryAcquire();
  if (!d.ok) throw new Error(`refused while ${d.state}`);
  return d.call;
}

function fail(breaker: CircuitBreaker, n: number): void {
  for (let i = 0; i < n; i++) admit(breaker).failure();
}

describe('circuitBreaker', () => {
  it('opens after 5 consecutive failures by default; a success resets the count', () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({ clock });
    fail(breaker, 4);
    admit(breaker).success();
    fail(breaker, 4);
    expect(breaker.state).toBe('closed');
    fail(breaker, 1);
    expect(breaker.state).toBe('open');
    expect(breaker.tryAcquire()).toEqual({ ok: false, state: 'open', retryAfterMs: 5_000 });
  });

  it('half-open after the cool-down lets a bounded number of probes through and refuses the rest at once', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      openMs: 1_000,
      halfOpenProbes: 2,
      trip: { kind: 'consecutive', failures: 1 },
    });
    fail(breaker, 1);
    await clock.advance(999);
    expect(breaker.tryAcquire()).toMatchObject({ ok: false, state: 'open', retryAfterMs: 1 });
    await clock.advance(1);
    expect(breaker.state).toBe('half-open');
    const a = admit(breaker);
    const b = admit(breaker);
    for (let i = 0; i < 100; i++) {
      expect(breaker.tryAcquire()).toEqual({
        ok: false,
        state: 'half-open',
        retryAfterMs: undefined,
      });
    }
    a.success();
    expect(breaker.state).toBe('half-open'); // every probe must succeed
    b.success();
    expect(breaker.state).toBe('closed');
  });

  it('a failed probe opens the breaker again for a full cool-down', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      openMs: 1_000,
      trip: { kind: 'consecutive', failures: 1 },
    });
    fail(breaker, 1);
    await clock.advance(1_000);
    admit(breaker).failure();
    expect(breaker.state).toBe('open');
    expect(breaker.tryAcquire()).toMatchObject({ retryAfterMs: 1_000 });
  });

  it('local refusals are not failures: own cap, budget, throttle and breaker errors are ignored', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({ clock, trip: { kind: 'consecutive', failures: 1 } });
    const local = [
      new QueueFullError(),
      new ThrottledError({ rejectProbability: 0.9 }),
      new RetryBudgetExhaustedError({ attempts: 2 }),
      new CircuitOpenError(),
    ];
    for (let i = 0; i < 100; i++) {
      const error = local[i % local.length]!;
      await expect(breaker.run(() => Promise.reject(error))).rejects.toBe(error);
    }
    expect(breaker.state).toBe('closed');
    // A caller that gave up is not the dependency's fault either.
    const controller = new AbortController();
    controller.abort();
    await expect(
      breaker.run(() => Promise.reject(new Error('aborted')), { signal: controller.signal }),
    ).rejects.toThrow('aborted');
    expect(breaker.state).toBe('closed');
    await expect(breaker.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(breaker.state).toBe('open');
    await expect(breaker.run(() => 1)).rejects.toBeInstanceOf(CircuitOpenError);
  });

  it('an ignored probe gives its slot back', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      openMs: 100,
      trip: { kind: 'consecutive', failures: 1 },
    });
    fail(breaker, 1);
    await clock.advance(100);
    admit(breaker).ignore();
    admit(breaker).success();
    expect(breaker.state).toBe('closed');
  });

  it('outcomes of calls admitted before a change of state do not move the breaker', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      openMs: 100,
      trip: { kind: 'consecutive', failures: 2 },
    });
    const early = [admit(breaker), admit(breaker), admit(breaker)];
    early[0]!.failure();
    early[1]!.failure();
    expect(breaker.state).toBe('open');
    await clock.advance(100);
    const probe = admit(breaker);
    early[2]!.success(); // from the closed generation: ignored
    expect(breaker.state).toBe('half-open');
    probe.failure();
    probe.success(); // a second report is ignored
    expect(breaker.state).toBe('open');
  });

  it('lost probes cannot leave it stuck half-open: after a cool-down, new probes go', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      openMs: 100,
      trip: { kind: 'consecutive', failures: 1 },
    });
    fail(breaker, 1);
    await clock.advance(100);
    const lost = admit(breaker);
    await clock.advance(99);
    expect(breaker.tryAcquire().ok).toBe(false);
    await clock.advance(1);
    const fresh = admit(breaker);
    lost.failure(); // too late to count
    expect(breaker.state).toBe('half-open');
    fresh.success();
    expect(breaker.state).toBe('closed');
  });

  it('an owner may admit and report closed-state calls without tickets, with the same verdicts', async () => {
    const clock = createVirtualClock();
    const trip = { kind: 'time', windowMs: 10_000, minimumCalls: 4, failureRatio: 0.5 } as const;
    const owned = ownedCircuitBreaker({ clock, trip, openMs: 1_000 });
    const plain = circuitBreaker({ clock, trip, openMs: 1_000 });
    // success, failure, success, failure (opens: 2 of 4), in both
    for (const kind of ['success', 'failure', 'success', 'failure'] as const) {
      const generation = owned.admitClosed();
      expect(generation).toBeGreaterThanOrEqual(0);
      owned.reportClosed(generation, kind, clock.now());
      admit(plain)[kind]();
      await clock.advance(100);
    }
    expect([owned.state, plain.state]).toEqual(['open', 'open']);
    // Not closed: the owner must go through tryAcquire, which refuses at once.
    expect(owned.admitClosed()).toBe(-1);
    expect(owned.tryAcquire()).toMatchObject({ ok: false, state: 'open' });
    await clock.advance(1_000);
    expect(owned.admitClosed()).toBe(-1); // half-open: probes are counted, so tickets only
    admit(owned).success();
    expect(owned.state).toBe('closed');
    // A report from before a change of state moves nothing.
    const stale = owned.admitClosed();
    fail(owned, 1);
    fail(owned, 3); // 4 failures of 4: opens
    expect(owned.state).toBe('open');
    await clock.advance(1_000);
    admit(owned).success(); // half-open → closed: a new generation again
    owned.reportClosed(stale, 'failure');
    expect(owned.toJSON()).toMatchObject({ state: 'closed', window: { calls: 0, failures: 0 } });
    // Slow calls are measured from a ticket's start: with slowCallMs, tickets only.
    expect(ownedCircuitBreaker({ clock, slowCallMs: 100 }).admitClosed()).toBe(-1);
  });

  it('count window: opens when the failure ratio over the last calls reaches the threshold', () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      trip: { kind: 'count', size: 10, minimumCalls: 4, failureRatio: 0.5 },
    });
    fail(breaker, 1);
    admit(breaker).success();
    fail(breaker, 1);
    expect(breaker.state).toBe('closed'); // 3 calls < minimumCalls
    for (let i = 0; i < 20; i++) admit(breaker).success();
    fail(breaker, 4); // 4 of the last 10
    expect(breaker.state).toBe('closed');
    fail(breaker, 1); // 5 of the last 10
    expect(breaker.state).toBe('open');
  });

  it('time window: failures age out of the window', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      trip: { kind: 'time', windowMs: 10_000, minimumCalls: 10, failureRatio: 0.5 },
    });
    fail(breaker, 9);
    await clock.advance(11_000);
    fail(breaker, 1);
    for (let i = 0; i < 9; i++) admit(breaker).success();
    expect(breaker.state).toBe('closed');
    fail(breaker, 7); // 8 of 17
    expect(breaker.state).toBe('closed');
    fail(breaker, 1); // 9 of 18
    expect(breaker.state).toBe('open');
  });

  it('slow successes count as failures when slowCallMs is set', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      slowCallMs: 50,
      trip: { kind: 'consecutive', failures: 2 },
    });
    for (let i = 0; i < 2; i++) {
      const call = admit(breaker);
      await clock.advance(51);
      call.success();
    }
    expect(breaker.state).toBe('open');
  });

  it('emits every change of state', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      openMs: 10,
      trip: { kind: 'consecutive', failures: 1 },
    });
    const seen: string[] = [];
    using _ = breaker.onStateChange((e) => seen.push(`${e.from}->${e.to}`));
    fail(breaker, 1);
    await clock.advance(10);
    admit(breaker).success();
    expect(seen).toEqual(['closed->open', 'open->half-open', 'half-open->closed']);
  });

  it('serialises and restores its state', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({
      clock,
      openMs: 1_000,
      trip: { kind: 'count', size: 4, failureRatio: 0.75 },
    });
    fail(breaker, 2);
    admit(breaker).success();
    const closed = JSON.parse(JSON.stringify(breaker.toJSON())) as ReturnType<
      typeof breaker.toJSON
    >;
    expect(closed).toEqual({ state: 'closed', window: { kind: 'count', outcomes: [1, 1, 0] } });
    const copy = circuitBreaker({
      clock,
      openMs: 1_000,
      trip: { kind: 'count', size: 4, failureRatio: 0.75 },
      initialState: closed,
    });
    fail(copy, 1);
    expect(copy.state).toBe('open'); // 3 of 4, as the original would have
    await clock.advance(400);
    const open = copy.toJSON();
    expect(open).toEqual({ state: 'open', openUntilWallMs: clock.wallNow() + 600 });
    const restored = circuitBreaker({ clock, openMs: 1_000, initialState: open });
    expect(restored.tryAcquire()).toMatchObject({ ok: false, retryAfterMs: 600 });
    // A save from the far future cannot keep it open longer than one cool-down.
    const hostile = circuitBreaker({
      clock,
      openMs: 1_000,
      initialState: { state: 'open', openUntilWallMs: 9e15 },
    });
    expect(hostile.tryAcquire()).toMatchObject({ retryAfterMs: 1_000 });
    const consecutive = circuitBreaker({
      clock,
      initialState: { state: 'closed', window: { kind: 'consecutive', failures: 4 } },
    });
    fail(consecutive, 1);
    expect(consecutive.state).toBe('open');
    expect(circuitBreaker({ clock, initialState: { state: 'half-open' } }).state).toBe('half-open');
  });

  it('refuses bad options by name', () => {
    expect(() => circuitBreaker({ openMs: 0 })).toThrow(/`openMs`/);
    expect(() => circuitBreaker({ halfOpenProbes: 0 })).toThrow(/`halfOpenProbes`/);
    expect(() => circuitBreaker({ halfOpenProbes: 101 })).toThrow(/`halfOpenProbes`/);
    expect(() => circuitBreaker({ slowCallMs: -1 })).toThrow(/`slowCallMs`/);
    expect(() => circuitBreaker({ trip: { kind: 'sliding' } as never })).toThrow(/`trip.kind`/);
    expect(() => circuitBreaker({ trip: { kind: 'consecutive', failures: 0 } })).toThrow(
      /`trip.failures`/,
    );
    expect(() => circuitBreaker({ trip: { kind: 'count', size: 20_000 } })).toThrow(/`trip.size`/);
    expect(() => circuitBreaker({ trip: { kind: 'time', failureRatio: 0 } })).toThrow(
      /`trip.failureRatio`/,
    );
    expect(() => circuitBreaker({ trip: { kind: 'time', windowMs: 10 } })).toThrow(
      /`trip.windowMs`/,
    );
    expect(() => circuitBreaker({ initialState: { state: 'ajar' } as never })).toThrow(
      /`initialState`/,
    );
    expect(() => circuitBreaker({ initialState: { state: 'open' } })).toThrow(
      /`initialState.openUntilWallMs`/,
    );
  });
});
