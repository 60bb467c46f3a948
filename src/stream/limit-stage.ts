/**
 * `limitStage`: a `concurrencyLimit` inside a `stream.pipeline`. Each item runs under a permit
 * of the limit (which other work may share: a database pool's 10 connections serve requests
 * and the export alike), held until the work settles; the stage itself is a `boundedMap`, so
 * the items it holds stay bounded whatever the speeds upstream and downstream.
 *
 * @module
 */
import type { ConcurrencyLimit } from '../core/concurrency-limit/types.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { optionsObject } from '../core/internal/validate.js';
import { BoundedMapIterator } from './bounded-map-iterator.js';
import { boundedMapSettings } from './bounded-map.js';
import type { BoundedMapFn, BoundedMapOptions } from './bounded-map-types.js';
import type { PipelineStage } from './stage.js';
import { functionArgument } from './validate.js';

/**
 * Options of {@link limitStage}: those of `boundedMap` but the signal, which comes from the
 * pipeline.
 */
export type LimitStageOptions = Omit<BoundedMapOptions, 'signal'>;

/**
 * A pipeline stage that maps each item through `fn` holding a permit of `limit`, at most
 * `concurrency` items at a time and `concurrency + maxBuffered` held. `fn` gets a signal that
 * aborts when the pipeline fails or is destroyed.
 *
 * A refusal from the limit (its line full, or waited in longer than `maxQueueWaitMs`) fails the
 * pipeline with the limit's `RejectedError`: give the limit a line (`maxQueue` of at least
 * `concurrency`) and a wait that fits the work, so the stage waits for a slot rather than fails.
 *
 * Invalid arguments throw a `SpillwayConfigError` here, naming the option and the value.
 *
 * @example
 * const db = concurrencyLimit({ limit: 10, maxQueue: 100, maxQueueWaitMs: 5_000 });
 * await pipeline(
 *   Readable.from(ids),
 *   limitStage(db, (id, { signal }) => loadRow(id, { signal }), { concurrency: 4, maxBuffered: 16 }),
 *   toCsv,
 *   createWriteStream('rows.csv'),
 * );
 */
export function limitStage<T, R>(
  limit: ConcurrencyLimit,
  fn: BoundedMapFn<T, R>,
  options: LimitStageOptions,
): PipelineStage<T, Awaited<R>> {
  const l = limit as Partial<ConcurrencyLimit> | null;
  if (typeof l !== 'object' || l === null || typeof l.run !== 'function') {
    throw new SpillwayConfigError('limit', 'a concurrencyLimit (with run)', limit);
  }
  functionArgument('fn', fn);
  const o = optionsObject('limitStage options', options);
  const settings = boundedMapSettings(
    { ...o, signal: undefined } as BoundedMapOptions,
    'limitStage',
  );
  const underLimit: BoundedMapFn<T, R> = (item, context) =>
    limit.run((held) => fn(item, held), { signal: context.signal });
  return (source, stage) =>
    new BoundedMapIterator<T, R>(source, underLimit, { ...settings, signal: stage?.signal });
}
