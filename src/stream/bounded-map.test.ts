import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { boundedMap, type BoundedMapOptions } from './bounded-map.js';

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise callback run (no timers involved). */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** A source that counts pulls and whether it was closed. */
function counting(n = Infinity) {
  const seen = { pulled: 0, closed: false };
  function* gen() {
    try {
      for (let i = 0; i < n; i++) {
        seen.pulled++;
        yield i;
      }
    } finally {
      seen.closed = true;
    }
  }
  return { seen, source: gen() };
}

/**
 * fn whose calls wait until settled by hand, or until their signal aborts (then they reject
 * with its reason, as well-behaved work does); each call's signal is kept.
 */
function manual({ honourSignal = true } = {}) {
  const calls: { item: number; d: Deferred<number>; signal: AbortSignal }[] = [];
  const fn = (item: number, { signal }: { signal: AbortSignal }) => {
    const d = deferred<number>();
    calls.push({ item, d, signal });
    if (!honourSignal) return d.promise;
    const onAbort = () => d.reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    return d.promise.finally(() => signal.removeEventListener('abort', onAbort));
  };
  return { calls, fn };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) out.push(v);
  return out;
}

const opts = (o: Partial<BoundedMapOptions> = {}): BoundedMapOptions => ({
  concurrency: 2,
  maxBuffered: 2,
  ...o,
});

describe('boundedMap', () => {
  it('maps a sync source with a sync fn, in order', async () => {
    expect(await collect(boundedMap([1, 2, 3], (x) => x * 10, opts()))).toEqual([10, 20, 30]);
  });

  it('maps an async source with an async fn, in order even when later items finish first', async () => {
    async function* source() {
      yield await Promise.resolve('a');
      yield 'b';
      yield 'c';
    }
    const { calls, fn } = manual();
    const it = boundedMap(source(), (s: string, ctx) => fn(s.charCodeAt(0), ctx), opts());
    const all = collect(it);
    await flush();
    expect(calls.map((c) => c.item)).toEqual([97, 98]);
    calls[1]!.d.resolve(2);
    await flush();
    calls[0]!.d.resolve(1);
    await flush();
    calls[2]!.d.resolve(3);
    expect(await all).toEqual([1, 2, 3]);
  });

  it('yields as items finish when not ordered', async () => {
    const { calls, fn } = manual();
    const all = collect(boundedMap([0, 1, 2], fn, opts({ concurrency: 3, ordered: false })));
    await flush();
    calls[2]!.d.resolve(2);
    await flush();
    calls[0]!.d.resolve(0);
    await flush();
    calls[1]!.d.resolve(1);
    expect(await all).toEqual([2, 0, 1]);
  });

  it('runs at most `concurrency` calls, and pulls no more than it can hold', async () => {
    const { seen, source } = counting();
    const { calls, fn } = manual();
    const it = boundedMap(source, fn, { concurrency: 3, maxBuffered: 2 });
    expect(seen.pulled).toBe(0); // nothing before the first next()
    const first = it.next();
    await flush();
    expect(calls).toHaveLength(3);
    expect(it.active).toBe(3);
    for (const c of calls.splice(0)) c.d.resolve(c.item);
    await flush();
    // 0 went to the consumer; 1 and 2 are held; three more run (3 running + 2 held = 5).
    expect(await first).toEqual({ done: false, value: 0 });
    expect(it.buffered).toBe(2);
    expect(it.active).toBe(3);
    expect(seen.pulled).toBe(6);
    for (const c of calls.splice(0)) c.d.resolve(c.item);
    await flush();
    // Done results wait for the consumer: nothing more is pulled until it takes one.
    expect(it.buffered).toBe(5);
    expect(it.active).toBe(0);
    expect(seen.pulled).toBe(6);
    expect(await it.next()).toEqual({ done: false, value: 1 });
    await flush();
    expect(seen.pulled).toBe(7);
    expect(it.active).toBe(1);
    await it.return();
    expect(seen.closed).toBe(true);
  });

  it('holds a slow first item and the ones behind it within the bound when ordered', async () => {
    const { seen, source } = counting();
    const { calls, fn } = manual();
    const it = boundedMap(source, fn, { concurrency: 2, maxBuffered: 3 });
    void it.next();
    await flush();
    // Item 0 never finishes; the others finish at once: 0 running + 4 done behind it = 5.
    for (let round = 0; round < 10; round++) {
      for (const c of calls.filter((c) => c.item !== 0)) c.d.resolve(c.item);
      await flush();
    }
    expect(seen.pulled).toBe(5);
    expect(it.active + it.buffered).toBe(5);
    calls[0]!.d.resolve(0);
    await it.return();
  });

  it('stops on the first failure: aborts the work in flight, closes the source, rejects once', async () => {
    const { seen, source } = counting();
    const { calls, fn } = manual({ honourSignal: false });
    const it = boundedMap(source, fn, opts());
    const first = it.next();
    await flush();
    const boom = new Error('boom');
    calls[1]!.d.reject(boom);
    await flush();
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(calls[0]!.signal.reason).toBe(boom);
    // The answer waits until the call in flight has settled.
    let answered = false;
    first.then(
      () => (answered = true),
      () => (answered = true),
    );
    await flush();
    expect(answered).toBe(false);
    expect(seen.closed).toBe(false);
    calls[0]!.d.reject(new Error('aborted'));
    await expect(first).rejects.toBe(boom);
    expect(seen.closed).toBe(true);
    expect(seen.pulled).toBe(2);
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(it.active).toBe(0);
  });

  it('reports an fn that throws synchronously', async () => {
    const boom = new Error('sync');
    const it = boundedMap(
      [1, 2, 3],
      () => {
        throw boom;
      },
      opts(),
    );
    await expect(it.next()).rejects.toBe(boom);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it('stops when the source throws, without closing it again', async () => {
    const boom = new Error('source');
    let returned = 0;
    const source: AsyncIterable<number> = {
      [Symbol.asyncIterator]() {
        let i = 0;
        return {
          next: () => (i++ < 1 ? Promise.resolve({ done: false, value: 1 }) : Promise.reject(boom)),
          return: () => {
            returned++;
            return Promise.resolve({ done: true, value: undefined });
          },
        };
      },
    };
    const { calls, fn } = manual();
    const it = boundedMap(source, fn, opts());
    const first = it.next();
    await flush();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.signal.aborted).toBe(true);
    calls[0]!.d.resolve(1); // settles after the abort: its result is dropped
    await expect(first).rejects.toBe(boom);
    expect(returned).toBe(0);
  });

  it('stops when the signal aborts, and removes its listener', async () => {
    const { seen, source } = counting();
    const { calls, fn } = manual();
    const ac = new AbortController();
    const it = boundedMap(source, fn, opts({ signal: ac.signal }));
    const first = it.next();
    await flush();
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort(new Error('caller left'));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    for (const c of calls) {
      expect(c.signal.aborted).toBe(true);
      c.d.reject(c.signal.reason);
    }
    await expect(first).rejects.toThrow('caller left');
    expect(seen.closed).toBe(true);
  });

  it('refuses at once with a signal already aborted, closing the source unpulled', async () => {
    const { seen, source } = counting();
    const ac = new AbortController();
    ac.abort(new Error('too late'));
    const it = boundedMap(source, (x) => x, opts({ signal: ac.signal }));
    await expect(it.next()).rejects.toThrow('too late');
    expect(seen.pulled).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('removes its signal listener when the source ends', async () => {
    const ac = new AbortController();
    expect(await collect(boundedMap([1, 2], (x) => x, opts({ signal: ac.signal })))).toEqual([
      1, 2,
    ]);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('on break: closes the source and aborts the work in flight before the loop exits', async () => {
    const { seen, source } = counting();
    const signals: AbortSignal[] = [];
    let settled = 0;
    const fn = (x: number, { signal }: { signal: AbortSignal }) => {
      signals.push(signal);
      if (x === 0) return Promise.resolve(x);
      // Honours its signal: ends only when aborted.
      return new Promise<number>((_, reject) =>
        signal.addEventListener(
          'abort',
          () => {
            settled++;
            reject(signal.reason as Error);
          },
          { once: true },
        ),
      );
    };
    const ac = new AbortController();
    const it = boundedMap(source, fn, opts({ concurrency: 3, signal: ac.signal }));
    for await (const v of it) {
      expect(v).toBe(0);
      break;
    }
    expect(seen.closed).toBe(true);
    // Every call but the first was still running, and each settled on the abort.
    expect(settled).toBe(signals.length - 1);
    expect(settled).toBeGreaterThanOrEqual(2);
    expect(signals[0]!.aborted).toBe(true);
    expect(it.active).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(signals[0]!, 'abort')).toHaveLength(0);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it('waits for a pending pull before closing an async source on return()', async () => {
    const gate = deferred();
    let closed = false;
    async function* source() {
      try {
        yield 1;
        await gate.promise;
        yield 2;
      } finally {
        closed = true;
      }
    }
    const it = boundedMap(source(), (x: number) => x, opts());
    expect(await it.next()).toEqual({ done: false, value: 1 });
    await flush(); // the pull of 2 is pending on the gate
    const left = it.return();
    await flush();
    expect(closed).toBe(false);
    gate.resolve();
    await left;
    expect(closed).toBe(true);
  });

  it("rejects return() with the source's own error when closing it fails", async () => {
    const boom = new Error('close');
    const source: Iterable<number> = {
      [Symbol.iterator]: () => ({
        next: () => ({ done: false, value: 1 }),
        return: () => {
          throw boom;
        },
      }),
    };
    const it = boundedMap(source, (x) => x, opts());
    await it.next();
    await expect(it.return()).rejects.toBe(boom);
  });

  it('answers concurrent next() calls in order', async () => {
    const { calls, fn } = manual();
    const it = boundedMap([0, 1, 2], fn, opts({ concurrency: 3 }));
    const answers = [it.next(), it.next(), it.next(), it.next()];
    await flush();
    calls[2]!.d.resolve(2);
    calls[1]!.d.resolve(1);
    calls[0]!.d.resolve(0);
    expect(await Promise.all(answers)).toEqual([
      { done: false, value: 0 },
      { done: false, value: 1 },
      { done: false, value: 2 },
      { done: true, value: undefined },
    ]);
  });

  it('return() before the first next() leaves the source untouched', async () => {
    const { seen, source } = counting();
    const it = boundedMap(source, (x) => x, opts());
    expect(await it.return()).toEqual({ done: true, value: undefined });
    expect(seen.pulled).toBe(0);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it('works with await using', async () => {
    const { seen, source } = counting();
    {
      await using it = boundedMap(source, (x) => x, opts());
      await it.next();
    }
    expect(seen.closed).toBe(true);
  });

  it('refuses bad arguments at construction, naming them', () => {
    const bad: [unknown, unknown, unknown, string][] = [
      [42, (x: number) => x, opts(), '`source`'],
      [[1], 'nope', opts(), '`fn`'],
      [[1], (x: number) => x, 5, '`boundedMap options` to be an options object, got 5'],
      [[1], (x: number) => x, undefined, '`concurrency` to be a positive integer, got undefined'],
      [
        [1],
        (x: number) => x,
        opts({ concurrency: 0 }),
        '`concurrency` to be a positive integer, got 0',
      ],
      [[1], (x: number) => x, opts({ concurrency: 1.5 }), 'got 1.5'],
      [
        [1],
        (x: number) => x,
        { concurrency: 1 },
        '`maxBuffered` to be an integer of 0 or more, got undefined',
      ],
      [[1], (x: number) => x, opts({ maxBuffered: -1 }), 'got -1'],
      [
        [1],
        (x: number) => x,
        { ...opts(), ordered: 'yes' },
        '`ordered` to be a boolean, got "yes"',
      ],
      [[1], (x: number) => x, { ...opts(), signal: {} }, '`signal` to be an AbortSignal'],
    ];
    for (const [source, fn, options, message] of bad) {
      const call = () =>
        boundedMap(
          source as Iterable<number>,
          fn as (x: number) => number,
          options as BoundedMapOptions,
        );
      expect(call).toThrow(SpillwayConfigError);
      expect(call).toThrow(message);
    }
  });
});

describe('boundedMap: questions that are not awaited', () => {
  it('holds next() calls waiting at once to concurrency + maxBuffered', async () => {
    const never = new Promise<number>(() => {});
    const map = boundedMap([1, 2, 3], () => never, { concurrency: 1, maxBuffered: 1 });
    const asked = [map.next(), map.next()];
    await expect(map.next()).rejects.toThrow(/at most 2 calls waiting at once/);
    expect(asked).toHaveLength(2);
  });
});
