import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { armTimer, maxTimerDelayMs, timerDelayMs } from './timer.js';

describe('timerDelayMs', () => {
  it('keeps delays a timer can wait, and clamps the rest to [0, 2^31 − 1]', () => {
    expect(timerDelayMs(250.5)).toBe(250.5);
    expect(timerDelayMs(maxTimerDelayMs)).toBe(maxTimerDelayMs);
    for (const long of [maxTimerDelayMs + 1, 99_999_999_000, Infinity]) {
      expect(timerDelayMs(long)).toBe(maxTimerDelayMs);
    }
    for (const none of [0, -5, -Infinity, Number.NaN]) expect(timerDelayMs(none)).toBe(0);
  });
});

// The fake clock behaves as Node does: a delay past 2^31 − 1 ms fires after 1 ms.
describe('armTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a delay past the longest timer waits the longest timer, not 1 ms', () => {
    const fired: string[] = [];
    armTimer((what: string) => fired.push(what), 99_999_999_000, 'long');
    armTimer((what: string) => fired.push(what), 5, 'short');
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual(['short']);
    vi.advanceTimersByTime(maxTimerDelayMs);
    expect(fired).toEqual(['short', 'long']);
  });
});
