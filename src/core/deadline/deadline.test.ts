import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { DeadlineExceededError } from '../errors/rejected-error.js';
import { deadline } from './deadline.js';

describe('deadline', () => {
  it('aborts its signal at expiresAt with DeadlineExceededError, in virtual time', async () => {
    const clock = createVirtualClock({ start: 1_000 });
    const d = deadline({ timeoutMs: 250, clock });
    expect(d.expiresAt).toBe(1_250);
    await clock.advance(100);
    expect(d.remainingMs()).toBe(150);
    expect(d.aborted).toBe(false);
    await clock.advance(150);
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect(d.remainingMs()).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('aborts with the caller’s reason when the caller’s signal fires first, and detaches', () => {
    const clock = createVirtualClock();
    const caller = new AbortController();
    const d = deadline({ timeoutMs: 1_000, signal: caller.signal, clock });
    caller.abort(new Error('client went away'));
    expect((d.signal.reason as Error).message).toBe('client went away');
    expect(clock.pendingTimers).toBe(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('the earlier of timeoutMs and expiresAt wins; an already-spent deadline is aborted at once', () => {
    const clock = createVirtualClock({ start: 100 });
    const earlier = deadline({ timeoutMs: 50, expiresAt: 120, clock });
    expect(earlier.expiresAt).toBe(120);
    earlier.dispose();
    const spent = deadline({ expiresAt: 90, clock });
    expect(spent.aborted).toBe(true);
    expect(clock.pendingTimers).toBe(0);
    const signalOnly = deadline({ signal: new AbortController().signal, clock });
    expect(signalOnly.expiresAt).toBe(Infinity);
    expect(clock.pendingTimers).toBe(0);
  });

  it('leaves no listener and no timer behind after a million uses', { timeout: 120_000 }, () => {
    const clock = createVirtualClock();
    const caller = new AbortController();
    for (let i = 0; i < 1_000_000; i++) {
      const d = deadline({ timeoutMs: 1_000, signal: caller.signal, clock });
      d.dispose();
      d.dispose();
    }
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses bad options by name', () => {
    const clock = createVirtualClock();
    expect(() => deadline({ timeoutMs: -5, clock })).toThrow(/`timeoutMs`/);
    expect(() => deadline({ timeoutMs: Number.NaN, clock })).toThrow(/`timeoutMs`/);
    expect(() => deadline({ expiresAt: Number.NaN, clock })).toThrow(/`expiresAt`/);
    expect(() => deadline({ timeoutMs: 1, signal: {} as AbortSignal, clock })).toThrow(/`signal`/);
  });
});
