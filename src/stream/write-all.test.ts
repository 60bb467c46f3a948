import { getEventListeners } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { writeAll } from './write-all.js';

const dir = mkdtempSync(join(tmpdir(), 'spillway-write-all-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lets every pending promise callback and nextTick run (no timers involved). */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => process.nextTick(resolve));
}

/** A writable whose writes complete only when the test says so; records the peak buffer. */
function heldWritable(highWaterMark = 4) {
  const pending: ((error?: Error) => void)[] = [];
  const written: string[] = [];
  let peak = 0;
  const writable = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      written.push(chunk);
      pending.push(callback);
    },
  });
  const originalWrite = writable.write.bind(writable);
  writable.write = ((chunk: string) => {
    const ok = originalWrite(chunk);
    peak = Math.max(peak, writable.writableLength);
    return ok;
  }) as typeof writable.write;
  return {
    writable,
    written,
    pending,
    peak: () => peak,
    /** Completes every write waiting, as many rounds as it takes. */
    async drainAll() {
      for (let round = 0; round < 1_000 && !writable.writableFinished; round++) {
        for (const callback of pending.splice(0)) callback();
        await flush();
      }
    },
  };
}

/** Listener counts per event, to compare before and after. */
function listeners(w: Writable): Record<string, number> {
  return Object.fromEntries(w.eventNames().map((n) => [String(n), w.listenerCount(n)]));
}

/** A source that records whether it was closed. */
function closable(n: number) {
  const seen = { closed: false };
  async function* gen() {
    try {
      for (let i = 0; i < n; i++) yield await Promise.resolve(`${i},`);
    } finally {
      seen.closed = true;
    }
  }
  return { seen, source: gen() };
}

describe('writeAll', () => {
  it('waits for drain whenever write() says so, then ends and finishes', async () => {
    const w = heldWritable(4);
    const before = listeners(w.writable);
    const chunks = Array.from({ length: 50 }, (_, i) => `${i % 10}`);
    const done = writeAll(w.writable, chunks);
    await flush();
    // The first write fills a 4-byte buffer of 1-byte chunks at the 4th: nothing more until drain.
    expect(w.written).toHaveLength(1);
    expect(w.writable.writableLength).toBe(4);
    await w.drainAll();
    await done;
    expect(w.written.join('')).toBe(chunks.join(''));
    expect(w.peak()).toBe(4);
    expect(w.writable.writableFinished).toBe(true);
    expect(listeners(w.writable)).toEqual(before);
  });

  it('writes a file through a real file stream, and resolves with the file closed', async () => {
    const file = join(dir, 'rows.csv');
    const out = createWriteStream(file, { highWaterMark: 1024 });
    async function* rows() {
      for (let i = 0; i < 5_000; i++) yield await Promise.resolve(`${i},row ${i}\n`);
    }
    let peak = 0;
    const write = out.write.bind(out);
    out.write = ((chunk: string) => {
      const ok = write(chunk);
      peak = Math.max(peak, out.writableLength);
      return ok;
    }) as typeof out.write;
    await writeAll(out, rows());
    expect(out.closed).toBe(true);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(5_000);
    expect(lines[4_999]).toBe('4999,row 4999');
    // Never more than the high-water mark plus the chunk that crossed it.
    expect(peak).toBeLessThan(1024 + 32);
  });

  it('rejects with the stream error, once, closes the source and removes its listeners', async () => {
    const w = heldWritable(4);
    const before = listeners(w.writable);
    const { seen, source } = closable(100);
    const done = writeAll(w.writable, source);
    await flush();
    const boom = new Error('disk full');
    w.pending[0]!(boom);
    await expect(done).rejects.toBe(boom);
    expect(seen.closed).toBe(true);
    expect(listeners(w.writable)).toEqual(before);
    expect(w.writable.destroyed).toBe(true);
  });

  it('rejects with a premature close when the stream is destroyed mid-write', async () => {
    const w = heldWritable(4);
    const { seen, source } = closable(100);
    const done = writeAll(w.writable, source);
    await flush();
    w.writable.destroy();
    await expect(done).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(seen.closed).toBe(true);
  });

  it('destroys the stream with the error when the source throws', async () => {
    const w = heldWritable(1_000);
    const before = listeners(w.writable);
    const boom = new Error('bad row');
    async function* source() {
      yield await Promise.resolve('a');
      throw boom;
    }
    await expect(writeAll(w.writable, source())).rejects.toBe(boom);
    expect(w.writable.destroyed).toBe(true);
    expect(w.writable.errored).toBe(boom);
    expect(w.writable.writableFinished).toBe(false);
    expect(listeners(w.writable)).toEqual(before);
  });

  it('reports an error thrown by write() itself, destroying the stream', async () => {
    const w = heldWritable(1_000);
    // A number is not a valid chunk for a byte stream: write() throws.
    await expect(writeAll(w.writable, [1 as unknown as string])).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG_TYPE',
    });
    expect(w.writable.destroyed).toBe(true);
  });

  it('stops at once when the signal aborts while waiting for drain', async () => {
    const w = heldWritable(4);
    const before = listeners(w.writable);
    const { seen, source } = closable(100);
    const ac = new AbortController();
    const done = writeAll(w.writable, source, { signal: ac.signal });
    await flush();
    expect(w.writable.writableNeedDrain).toBe(true);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    const reason = new Error('caller left');
    ac.abort(reason);
    await expect(done).rejects.toBe(reason);
    expect(w.writable.destroyed).toBe(true);
    expect(seen.closed).toBe(true);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(listeners(w.writable)).toEqual(before);
  });

  it('writes nothing with a signal already aborted', async () => {
    const w = heldWritable(4);
    const ac = new AbortController();
    ac.abort(new Error('too late'));
    await expect(writeAll(w.writable, ['a'], { signal: ac.signal })).rejects.toThrow('too late');
    expect(w.written).toEqual([]);
    expect(w.writable.destroyed).toBe(true);
  });

  it('waits for a drain the stream already needs before its first write', async () => {
    const w = heldWritable(1);
    w.writable.write('x'); // someone else filled the buffer
    const done = writeAll(w.writable, ['y']);
    await flush();
    expect(w.written).toEqual(['x']);
    expect(w.writable.writableLength).toBe(1);
    await w.drainAll();
    await done;
    expect(w.written).toEqual(['x', 'y']);
  });

  it('rejects when the stream already ended, or ends under it', async () => {
    const w = heldWritable(4);
    w.writable.end();
    await w.drainAll();
    await expect(writeAll(w.writable, ['late'])).rejects.toThrow(
      'Expected `writable` to be a stream nobody else ends while writeAll writes, got "a stream already destroyed"',
    );
    const v = heldWritable(1);
    const done = writeAll(v.writable, ['a', 'b', 'c']);
    await flush();
    v.writable.end();
    await v.drainAll();
    await expect(done).rejects.toThrow('nobody else ends');
    expect(v.written).toEqual(['a']);
  });

  it('refuses bad arguments at once, naming them', () => {
    const w = heldWritable();
    const bad: [unknown, unknown, unknown, string][] = [
      [{}, ['a'], undefined, '`writable` to be a Writable stream'],
      [w.writable, 42, undefined, '`iterable` to be an iterable or an async iterable, got 42'],
      [w.writable, ['a'], 'x', '`writeAll options` to be an options object'],
      [w.writable, ['a'], { signal: 'x' }, '`signal` to be an AbortSignal, got "x"'],
    ];
    for (const [writable, iterable, options, message] of bad) {
      const call = () =>
        writeAll(writable as Writable, iterable as string[], options as { signal?: AbortSignal });
      expect(call).toThrow(SpillwayConfigError);
      expect(call).toThrow(message);
    }
  });
});
