import { describe, expect, it, vi } from 'vitest';
import { Emitter, maxListeners } from './emitter.js';

describe('Emitter', () => {
  it('delivers to listeners until their subscription is disposed', () => {
    const emitter = new Emitter<number>();
    const seen: number[] = [];
    const sub = emitter.event((n) => seen.push(n));
    emitter.emit(1);
    sub.dispose();
    sub.dispose();
    emitter.emit(2);
    expect(seen).toEqual([1]);
    expect(emitter.size).toBe(0);
  });

  it('a throwing listener neither stops the others nor the emitter', async () => {
    const emitter = new Emitter<number>();
    const errors: unknown[] = [];
    const original = globalThis.queueMicrotask;
    const spy = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((fn) =>
      original(() => {
        try {
          fn();
        } catch (e) {
          errors.push(e);
        }
      }),
    );
    const seen: number[] = [];
    emitter.event(() => {
      throw new Error('bad listener');
    });
    emitter.event((n) => seen.push(n));
    emitter.emit(7);
    await Promise.resolve();
    spy.mockRestore();
    expect(seen).toEqual([7]);
    expect(errors).toHaveLength(1);
  });

  it('bounds listeners per event', () => {
    const emitter = new Emitter<number>();
    for (let i = 0; i < maxListeners; i++) emitter.event(() => undefined);
    expect(() => emitter.event(() => undefined)).toThrow(/at most 64 listeners/);
  });
});
