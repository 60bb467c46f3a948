import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import {
  ambientStore,
  currentContext,
  expiresAtOn,
  outsideContext,
  runInContext,
  type AmbientContext,
} from './ambient-context.js';

const a: AmbientContext = { expiresAt: 1_000, criticality: 'sheddable', attempt: 1 };
const b: AmbientContext = { expiresAt: 2_000, criticality: 'critical-plus', attempt: 2 };

/** Resolves on a later turn of the event loop (a macrotask), not in the same microtask run. */
const laterTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('currentContext', () => {
  it('is undefined outside any request', () => {
    expect(currentContext()).toBeUndefined();
  });

  it('is the context inside runInContext, through awaits, timers and microtasks', async () => {
    const seen: (AmbientContext | undefined)[] = [];
    await runInContext(a, async () => {
      seen.push(currentContext());
      await laterTurn();
      seen.push(currentContext());
      await new Promise<void>((resolve) =>
        queueMicrotask(() => {
          seen.push(currentContext());
          resolve();
        }),
      );
    });
    expect(seen).toEqual([a, a, a]);
    expect(currentContext()).toBeUndefined();
  });

  it('keeps interleaved units of work apart', async () => {
    const seen: string[] = [];
    const unit = (context: AmbientContext, turns: number) =>
      runInContext(context, async () => {
        for (let i = 0; i < turns; i++) {
          await laterTurn();
          seen.push(`${context.criticality}:${currentContext()?.criticality}`);
        }
      });
    await Promise.all([unit(a, 5), unit(b, 3), unit(a, 4), unit(b, 6)]);
    expect(seen).toHaveLength(18);
    for (const pair of seen) {
      const [want, got] = pair.split(':');
      expect(got).toBe(want);
    }
  });

  it('is the innermost context when nested, and the outer one again after', () => {
    runInContext(a, () => {
      runInContext(b, () => expect(currentContext()).toBe(b));
      expect(currentContext()).toBe(a);
    });
  });

  it('is undefined inside outsideContext, and in what that starts', async () => {
    const seen: unknown[] = [];
    await runInContext(a, () =>
      outsideContext(async () => {
        seen.push(currentContext());
        await laterTurn();
        seen.push(currentContext());
      }),
    );
    expect(seen).toEqual([undefined, undefined]);
  });

  it('is not carried by an emitter to listeners run for other work', async () => {
    // An emitter made inside one unit of work and fired from another: listeners run in the
    // context of the code that emits, not of the one that subscribed.
    const emitter = new EventEmitter();
    const seen: unknown[] = [];
    runInContext(a, () => emitter.on('x', () => seen.push(currentContext())));
    runInContext(b, () => emitter.emit('x'));
    emitter.emit('x');
    await laterTurn();
    expect(seen).toEqual([b, undefined]);
  });

  it('shares one store between two copies of the package (Symbol.for)', () => {
    const key = Symbol.for('spillway.ambientContext');
    expect((globalThis as Record<symbol, unknown>)[key]).toBe(ambientStore);
  });
});

describe('runInContext', () => {
  it('returns what fn returns', () => {
    expect(runInContext(a, () => 42)).toBe(42);
  });

  const bad: [string, unknown][] = [
    ['context', null],
    ['expiresAt', { ...a, expiresAt: Number.NaN }],
    ['expiresAt', { ...a, expiresAt: '1000' }],
    ['criticality', { ...a, criticality: 'urgent' }],
    ['attempt', { ...a, attempt: 0 }],
    ['attempt', { ...a, attempt: 1.5 }],
    ['signal', { ...a, signal: {} }],
    ['clock', { ...a, clock: { now: 1 } }],
  ];
  for (const [field, context] of bad) {
    it(`names a bad ${field}: ${JSON.stringify(context)}`, () => {
      let ran = false;
      const run = () =>
        runInContext(context as AmbientContext, () => {
          ran = true;
        });
      expect(run).toThrow(SpillwayArgumentError);
      expect(run).toThrow(`\`${field}\``);
      expect(ran).toBe(false);
    });
  }

  it('names a bad fn', () => {
    expect(() => runInContext(a, 'go' as never)).toThrow('`fn`');
    expect(() => outsideContext(undefined as never)).toThrow('`fn`');
  });
});

describe('expiresAtOn', () => {
  it('is expiresAt itself on the same clock, or when unbounded', () => {
    const clock = createVirtualClock({ start: 500 });
    expect(expiresAtOn({ ...a, clock }, clock)).toBe(1_000);
    expect(expiresAtOn({ ...a, clock, expiresAt: Infinity }, createVirtualClock())).toBe(Infinity);
  });

  it('carries over what is left of it to another clock', async () => {
    const theirs = createVirtualClock({ start: 10_000 });
    const mine = createVirtualClock({ start: 3 });
    const context = { ...a, clock: theirs, expiresAt: 10_250 };
    expect(expiresAtOn(context, mine)).toBe(253);
    await theirs.advance(50);
    expect(expiresAtOn(context, mine)).toBe(203);
  });
});
