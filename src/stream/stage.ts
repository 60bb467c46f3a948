/**
 * The shape of a pipeline stage: a function of the items upstream and the pipeline's signal,
 * returning the items for downstream. `stream.pipeline` calls it with its own signal, which
 * aborts when any part of the pipeline fails; `Duplex.from(stage)` makes it a Transform.
 *
 * @module
 */

/** What `stream.pipeline` passes to a function stage besides its source. */
export interface StageOptions {
  /** Aborts when the pipeline fails or is destroyed. */
  readonly signal?: AbortSignal | undefined;
}

/** A function stage for `stream.pipeline`, `Duplex.from`, or a hand-written `for await`. */
export type PipelineStage<T, R> = (
  source: AsyncIterable<T>,
  options?: StageOptions,
) => AsyncIterable<R>;
