// The stream helpers among Node's own streams: boundedMap as a pipeline stage and behind
// Readable.from, limitStage and creditStage inside stream.pipeline and as Duplex.from
// Transforms, and writeAll fed by boundedMap, with real file streams.
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { concurrencyLimit } from '../core/concurrency-limit/concurrency-limit.js';
import { creditGate } from '../core/credit-gate/credit-gate.js';
import { GateClosedError } from '../core/errors/gate-closed-error.js';
import { QueueFullError } from '../core/errors/rejected-error.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { boundedMap } from './bounded-map.js';
import { creditStage } from './credit-stage.js';
import { limitStage } from './limit-stage.js';
import { writeAll } from './write-all.js';

const dir = mkdtempSync(join(tmpdir(), 'spillway-pipeline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lets pending promise callbacks, nextTicks and stream I/O callbacks run (no timers). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** An object-mode writable that keeps what it gets. */
function sink<T>() {
  const got: T[] = [];
  const writable = new Writable({
    objectMode: true,
    write(chunk: T, _encoding, callback) {
      got.push(chunk);
      callback();
    },
  });
  return { got, writable };
}

/** A source that records whether it was closed. */
function closable(n = Infinity) {
  const seen = { closed: false, pulled: 0 };
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

describe('boundedMap with Node streams', () => {
  it('is a stage of stream.pipeline, with the pipeline signal', async () => {
    const { got, writable } = sink<number>();
    let given: AbortSignal | undefined;
    await pipeline(
      Readable.from([1, 2, 3, 4, 5]),
      // Typed as @types/node has function stages: the signal argument is optional.
      (source: AsyncIterable<number>, options?: { signal?: AbortSignal }) =>
        boundedMap(source, (x: number) => Promise.resolve(x * 2), {
          concurrency: 2,
          maxBuffered: 2,
          signal: (given = options?.signal),
        }),
      writable,
    );
    expect(got).toEqual([2, 4, 6, 8, 10]);
    expect(given).toBeInstanceOf(AbortSignal);
  });

  it('feeds Readable.from, which pulls only as its buffer allows; destroy() closes it all', async () => {
    const { seen, source } = closable();
    const signals: AbortSignal[] = [];
    const mapped = boundedMap(
      source,
      (x: number, { signal }) => {
        signals.push(signal);
        return x;
      },
      { concurrency: 2, maxBuffered: 2 },
    );
    const readable = Readable.from(mapped, { highWaterMark: 4 });
    readable.once('readable', () => undefined);
    await settle();
    // Readable's buffer (4) + what boundedMap holds (4) + the one in transit: nothing runs away.
    expect(seen.pulled).toBeLessThanOrEqual(4 + 4 + 1);
    readable.destroy();
    await settle();
    expect(seen.closed).toBe(true);
    expect(signals[0]!.aborted).toBe(true);
  });

  it('feeds writeAll: an export to a file through a bounded map', async () => {
    const file = join(dir, 'export.csv');
    const lines = boundedMap(
      Array.from({ length: 2_000 }, (_, i) => i),
      (i: number) => Promise.resolve(`${i},${i * i}\n`),
      { concurrency: 4, maxBuffered: 8 },
    );
    await writeAll(createWriteStream(file, { highWaterMark: 256 }), lines);
    const rows = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(rows).toHaveLength(2_000);
    expect(rows[1_999]).toBe(`1999,${1999 * 1999}`);
  });
});

describe('limitStage', () => {
  it('runs each item under a permit of a limit other work shares', async () => {
    const limit = concurrencyLimit({ limit: 3, maxQueue: 10, maxQueueWaitMs: 60_000 });
    const other = await limit.acquire(); // someone else holds one of the three
    if (!other.ok) throw new Error('no permit');
    let peak = 0;
    const { got, writable } = sink<string>();
    const done = pipeline(
      Readable.from(['a', 'b', 'c', 'd', 'e', 'f']),
      limitStage(
        limit,
        async (s: string) => {
          peak = Math.max(peak, limit.active);
          await settle();
          return s.toUpperCase();
        },
        { concurrency: 4, maxBuffered: 2 },
      ),
      writable,
    );
    await settle();
    // Four slots asked for, two free: two run and two wait in the limit's line.
    expect(limit.active).toBe(3);
    expect(limit.queued).toBe(2);
    other.permit.release();
    await done;
    expect(got).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(peak).toBe(3);
    expect(limit.active).toBe(0);
  });

  it('aborts the work and gives every permit back when the destination fails', async () => {
    const limit = concurrencyLimit({ limit: 4, maxQueue: 10, maxQueueWaitMs: 60_000 });
    const { seen, source } = closable();
    const aborted: unknown[] = [];
    const boom = new Error('disk full');
    let written = 0;
    const failing = new Writable({
      objectMode: true,
      write(_chunk, _encoding, callback) {
        callback(++written === 3 ? boom : undefined);
      },
    });
    await expect(
      pipeline(
        Readable.from(source),
        limitStage(
          limit,
          (x: number, { signal }) =>
            x < 3
              ? x
              : new Promise<number>((_, reject) =>
                  signal.addEventListener(
                    'abort',
                    () => {
                      aborted.push(signal.reason);
                      reject(signal.reason as Error);
                    },
                    { once: true },
                  ),
                ),
          { concurrency: 2, maxBuffered: 1 },
        ),
        failing,
      ),
    ).rejects.toBe(boom);
    await settle();
    expect(aborted.length).toBeGreaterThan(0);
    expect(limit.active).toBe(0);
    expect(limit.queued).toBe(0);
    expect(seen.closed).toBe(true);
  });

  it('fails the pipeline with the refusal when the limit has no room and no line', async () => {
    const limit = concurrencyLimit({ limit: 1 });
    const held = limit.tryAcquire();
    const { writable } = sink<number>();
    await expect(
      pipeline(
        Readable.from([1, 2]),
        limitStage(limit, (x: number) => x, { concurrency: 1, maxBuffered: 0 }),
        writable,
      ),
    ).rejects.toBeInstanceOf(QueueFullError);
    if (held.ok) held.permit.release();
  });

  it('works as a Transform through Duplex.from', async () => {
    const limit = concurrencyLimit({ limit: 2, maxQueue: 10 });
    const { got, writable } = sink<number>();
    const transform = Duplex.from(
      limitStage(limit, (x: number) => Promise.resolve(x + 1), { concurrency: 2, maxBuffered: 0 }),
    );
    await pipeline(Readable.from([1, 2, 3]), transform, writable);
    expect(got).toEqual([2, 3, 4]);
  });

  it('refuses bad arguments when built, naming them', () => {
    const limit = concurrencyLimit({ limit: 1 });
    expect(() => limitStage({} as never, (x) => x, { concurrency: 1, maxBuffered: 0 })).toThrow(
      '`limit` to be a concurrencyLimit (with run)',
    );
    expect(() => limitStage(limit, 3 as never, { concurrency: 1, maxBuffered: 0 })).toThrow(
      '`fn` to be a function',
    );
    expect(() => limitStage(limit, (x) => x, { concurrency: 0, maxBuffered: 0 })).toThrow(
      SpillwayConfigError,
    );
    expect(() => limitStage(limit, (x) => x, null as never)).toThrow(
      '`limitStage options` to be an options object, got null',
    );
  });
});

describe('creditStage', () => {
  it('lets items through only as the receiver grants credit, then completes the gate', async () => {
    const gate = creditGate({ maxCredit: 10 });
    const { got, writable } = sink<number>();
    const done = pipeline(Readable.from([1, 2, 3, 4, 5, 6]), creditStage<number>(gate), writable);
    await settle();
    expect(got).toEqual([]);
    expect(gate.waiting).toBe(1);
    gate.request(2);
    await settle();
    expect(got).toEqual([1, 2]);
    gate.request(10);
    await done;
    expect(got).toEqual([1, 2, 3, 4, 5, 6]);
    expect(gate.state).toBe('completed');
  });

  it("fails the pipeline when the receiver cancels, with the receiver's reason", async () => {
    const gate = creditGate({ maxCredit: 10, initialCredit: 1 });
    const { got, writable } = sink<number>();
    const done = pipeline(Readable.from([1, 2, 3]), creditStage<number>(gate), writable);
    await settle();
    expect(got).toEqual([1]);
    const reason = new Error('receiver went away');
    gate.cancel(reason);
    const error = await done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GateClosedError);
    expect((error as Error).cause).toBe(reason);
  });

  it('stops waiting for credit when the pipeline is aborted', async () => {
    const gate = creditGate({ maxCredit: 10 });
    const ac = new AbortController();
    const { writable } = sink<number>();
    const done = pipeline(Readable.from([1, 2]), creditStage<number>(gate), writable, {
      signal: ac.signal,
    });
    await settle();
    expect(gate.waiting).toBe(1);
    ac.abort();
    await expect(done).rejects.toMatchObject({ name: 'AbortError' });
    expect(gate.waiting).toBe(0);
    expect(gate.state).toBe('completed');
  });

  it('refuses something that is not a gate', () => {
    expect(() => creditStage({ send: () => Promise.resolve() } as never)).toThrow(
      '`gate` to be a creditGate (with send, tryTake and complete)',
    );
  });
});
