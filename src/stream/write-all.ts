/**
 * `writeAll`: write an iterable to a Node writable the way backpressure asks, in one call.
 * When `write()` returns false it waits for `drain` before the next chunk, so the stream's
 * buffer stays near its high-water mark instead of growing with the source; it ends the stream
 * and waits for it to finish; it reports the stream's own error, or a close before finish.
 *
 * @module
 */
import type { Writable } from 'node:stream';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { optionsObject } from '../core/internal/validate.js';
import { iterableArgument, optionalSignal } from './validate.js';
import { WritableWatch } from './writable-watch.js';

/** Options of {@link writeAll}. */
export interface WriteAllOptions {
  /**
   * Aborting stops writing and destroys the writable with the signal's reason; the promise
   * rejects with it. Seen between chunks, and at once while waiting for `drain` or `finish`.
   */
  readonly signal?: AbortSignal | undefined;
}

function writableArgument(value: Writable): Writable {
  const v = value as Partial<Writable> | null | undefined;
  if (
    typeof v !== 'object' ||
    v === null ||
    typeof v.write !== 'function' ||
    typeof v.end !== 'function' ||
    typeof v.on !== 'function' ||
    typeof v.destroy !== 'function'
  ) {
    throw new SpillwayConfigError('writable', 'a Writable stream', value);
  }
  return value;
}

/**
 * Writes every chunk of `iterable` to `writable`, waiting for `drain` whenever `write()`
 * returns false, then calls `end()` and resolves once the stream has finished (and, for
 * streams that close, closed: a file is complete on disk and its descriptor released).
 *
 * It rejects, once, with the first failure: the stream's error (or `ERR_STREAM_PREMATURE_CLOSE`
 * when it closes before finishing), an error thrown by the iterable or by `write()`, or the
 * signal's reason. A failure that is not the stream's own destroys the stream with it, as
 * `stream.pipeline` does, so nothing half-written looks complete. On any failure the iterable
 * is closed (`return()`), unless it threw. Every listener added is removed before it settles.
 *
 * A source that waits long between chunks delays the report of a stream error until its next
 * chunk: give it the same signal.
 *
 * Invalid arguments throw a `SpillwayConfigError` at once, naming the argument and the value.
 *
 * @example
 * await writeAll(createWriteStream('rows.csv'), rowsAsCsvLines(), { signal });
 */
export function writeAll<T>(
  writable: Writable,
  iterable: AsyncIterable<T> | Iterable<T>,
  options?: WriteAllOptions,
): Promise<void> {
  writableArgument(writable);
  iterableArgument('iterable', iterable);
  const signal = optionalSignal('signal', optionsObject('writeAll options', options).signal);
  return pump(writable, iterable, signal);
}

async function pump<T>(
  writable: Writable,
  iterable: AsyncIterable<T> | Iterable<T>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const watch = new WritableWatch(writable, signal);
  try {
    watch.check();
    if (writable.writableNeedDrain) await watch.wait('drain');
    if (typeof (iterable as Partial<AsyncIterable<T>>)[Symbol.asyncIterator] === 'function') {
      for await (const chunk of iterable) {
        watch.check();
        if (!writable.write(chunk)) await watch.wait('drain');
      }
    } else {
      // A sync source is written without a promise per chunk.
      for (const chunk of iterable as Iterable<T>) {
        watch.check();
        if (!writable.write(chunk)) await watch.wait('drain');
      }
    }
    watch.check();
    watch.end();
    await watch.wait('finish');
  } catch (error) {
    const cause = watch.failed ? watch.failure : error;
    if (!watch.hasEnded) {
      writable.destroy(cause as Error);
      await watch.ended;
    }
    throw cause;
  } finally {
    watch.dispose();
  }
}
