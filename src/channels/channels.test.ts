import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { aimdLimit, circuitBreaker } from '../index.js';
import { maxListeners } from '../core/events/emitter.js';
import { createVirtualClock } from '../testing/index.js';
import { bridgeBreaker, bridgeLimit } from './bridges.js';
import * as registry from './channels.js';
import { breakerChannel, channelNames, limitChannel, requestChannel } from './channels.js';

const undo: (() => void)[] = [];
afterEach(() => {
  for (const u of undo.splice(0)) u();
});

/** Subscribes by name, as a user would, and collects what arrives. */
function collect(name: string): unknown[] {
  const seen: unknown[] = [];
  const listener = (message: unknown): void => void seen.push(message);
  subscribe(name, listener);
  undo.push(() => unsubscribe(name, listener));
  return seen;
}

describe('the channel registry', () => {
  it('names each channel once, and each exported channel is Node’s channel of that name', () => {
    const names = Object.values(channelNames);
    expect(new Set(names).size).toBe(names.length);
    for (const [key, name] of Object.entries(channelNames)) {
      if (key === 'request') continue;
      const exported = (registry as Record<string, unknown>)[`${key}Channel`];
      expect(exported, key).toBe(channel(name));
    }
    expect(requestChannel.start).toBe(channel('tracing:spillway.request:start'));
    expect(requestChannel.asyncEnd).toBe(channel('tracing:spillway.request:asyncEnd'));
  });

  it('has subscribers only while someone listens by name', () => {
    expect(limitChannel.hasSubscribers).toBe(false);
    const seen = collect(channelNames.limit);
    expect(limitChannel.hasSubscribers).toBe(true);
    limitChannel.publish({
      route: 'r',
      dependency: undefined,
      limit: 2,
      previous: 1,
      rttMs: 3,
      dropped: false,
    });
    expect(seen).toHaveLength(1);
    undo.pop()!();
    expect(limitChannel.hasSubscribers).toBe(false);
  });
});

describe('bridges from core events', () => {
  it('publishes a breaker’s state changes, naming the dependency', () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({ trip: { kind: 'consecutive', failures: 1 }, clock });
    bridgeBreaker('users', breaker);
    const d = breaker.tryAcquire();
    expect(d.ok).toBe(true);
    // Not watched: nothing built, nothing published.
    if (d.ok) d.call.failure();
    expect(breaker.state).toBe('open');
    const seen = collect(channelNames.breaker);
    clock.advanceSync(5_000);
    const probe = breaker.tryAcquire();
    if (probe.ok) probe.call.success();
    expect(seen).toEqual([
      { dependency: 'users', from: 'open', to: 'half-open' },
      { dependency: 'users', from: 'half-open', to: 'closed' },
    ]);
  });

  it('publishes an adaptive limit’s moves, and nothing for a fixed limit', () => {
    const clock = createVirtualClock();
    const limit = aimdLimit({ initialLimit: 10, minLimit: 1, maxLimit: 20, clock });
    expect(bridgeLimit({ route: 'search' }, limit)).toBeDefined();
    expect(bridgeLimit({ route: 'fixed' }, 10)).toBeUndefined();
    expect(bridgeLimit({ route: 'plain' }, { current: 3 })).toBeUndefined();
    const seen = collect(channelNames.limit) as { route: string; limit: number }[];
    // A window of drops, closed on the clock: the limit backs off.
    for (let i = 0; i < 20 && seen.length === 0; i++) {
      limit.onSample({ rttMs: 50, inflight: 10, dropped: true });
      clock.advanceSync(100);
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]).toMatchObject({ route: 'search', dependency: undefined, previous: 10 });
    expect(seen[0]!.limit).toBeLessThan(10);
  });

  it('a primitive shared past its listener bound is left unbridged, never thrown', () => {
    const breaker = circuitBreaker();
    for (let i = 0; i < maxListeners; i++) expect(bridgeBreaker(`d${i}`, breaker)).toBeDefined();
    expect(bridgeBreaker('one-too-many', breaker)).toBeUndefined();
    expect(breakerChannel.hasSubscribers).toBe(false);
  });
});
