/**
 * Values for a Histogram, kept per attribute set and recorded into the SDK in runs: when the
 * SDK collects, and whenever an attribute set has {@link valuesPerRun} waiting. Each value is
 * still one `record` — the metrics API has no way to hand a histogram values aggregated ahead —
 * but a run of them in a loop costs the SDK a fraction of what the same calls cost one at a time
 * between requests, where its code and data are cold: S8's observed 200 went from 1.10–1.19 to
 * 1.02–1.08 × the unobserved one in CPU per response on Node 20–24, though it runs a few more
 * instructions (BENCHMARKS.md, "Observability overhead").
 *
 * What the exported data shows is unchanged — every value, in the collection that follows it,
 * flushed from the same batch observable callback as the sums (see pending-sums.ts) — but for
 * one thing: the SDK timestamps a series' first value when it is recorded, so a new series
 * starts at the flush that first recorded into it, up to one collection late. The SDK (2.x)
 * takes no trace context for a histogram's exemplars on this path, so none is lost.
 *
 * @module
 */
import type { Attributes, Histogram } from '@opentelemetry/api';
import { AttributeCells } from './attribute-cells.js';

/** Values kept per attribute set before they are recorded: 2 KB each. */
export const valuesPerRun = 256;

/** One attribute set's values since the last run. */
export interface ValueCell {
  readonly attributes: Attributes;
  readonly values: Float64Array;
  count: number;
}

/** The values of one histogram. */
export class PendingValues {
  readonly #instrument: Histogram;
  readonly #cells = new AttributeCells<ValueCell>((attributes) => ({
    attributes,
    values: new Float64Array(valuesPerRun),
    count: 0,
  }));

  constructor(instrument: Histogram) {
    this.#instrument = instrument;
  }

  /** The cell for `key`, if there is one; else call {@link open}. */
  cell(key: string): ValueCell | undefined {
    return this.#cells.cell(key);
  }

  /** A new cell for `key` with `attributes` (not copied: pass a fresh object). */
  open(key: string, attributes: Attributes): ValueCell {
    return this.#cells.open(key, attributes);
  }

  /** Keeps `value` for `cell`'s attribute set; a full cell is recorded first. */
  add(cell: ValueCell, value: number): void {
    if (cell.count === valuesPerRun) this.#run(cell);
    cell.values[cell.count++] = value;
  }

  /** Records every value kept since the last flush. */
  flush(): void {
    this.#cells.forEach((cell) => this.#run(cell));
  }

  #run(cell: ValueCell): void {
    const n = cell.count;
    cell.count = 0;
    for (let i = 0; i < n; i++) this.#instrument.record(cell.values[i]!, cell.attributes);
  }
}
