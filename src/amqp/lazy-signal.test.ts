import { describe, expect, it } from 'vitest';
import { LazySignal } from './lazy-signal.js';

describe('LazySignal', () => {
  it('aborts a signal read before the abort, once', () => {
    const lazy = new LazySignal();
    const signal = lazy.signal;
    expect(signal.aborted).toBe(false);
    lazy.abort('first');
    lazy.abort('second');
    expect(signal.reason).toBe('first');
    expect(lazy.reason).toBe('first');
  });

  it('hands an already aborted signal to a reader who comes after the abort', () => {
    const lazy = new LazySignal();
    lazy.abort('gone');
    expect(lazy.signal.aborted).toBe(true);
    expect(lazy.signal.reason).toBe('gone');
    expect(lazy.signal).toBe(lazy.signal);
  });
});
