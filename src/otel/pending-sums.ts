/**
 * Sums for a synchronous Counter or UpDownCounter, kept per attribute set and handed to the
 * SDK when it collects. The SDK hashes a record's attributes on every `add` (its keys sorted and
 * serialised: about as much work as a whole refusal), so adding per decision would cost more
 * than the decision; a map lookup here and one `add` per attribute set per collection cost next
 * to nothing, and the exported data is the same — a Counter stays a Counter.
 *
 * The owner flushes from a batch observable callback, which the SDK runs at the start of every
 * collection, before it reads its synchronous instruments: what was decided up to a scrape is in
 * that scrape. Were a future SDK to read them first, a flush would show one collection late,
 * never lost.
 *
 * @module
 */
import type { Attributes, Counter, UpDownCounter } from '@opentelemetry/api';

/** One attribute set's sum since the last flush. */
export interface PendingCell {
  delta: number;
}

interface Cell extends PendingCell {
  readonly attributes: Attributes;
  /** Handed to the instrument at least once: its series exists in every collection since. */
  reported: boolean;
}

/**
 * The most attribute sets kept per instrument: routes, results, criticalities and dependency
 * names are all bounded by the application, so this is only a backstop, set below the SDK's own
 * default limit (2,000) so that the overflow is marked here. Past it, sums go to one set marked
 * as the SDK marks its own overflow.
 */
export const maxAttributeSets = 1_000;

const overflowAttributes: Attributes = Object.freeze({ 'otel.metric.overflow': true });

/** The sums of one instrument. */
export class PendingSums {
  readonly #instrument: Counter | UpDownCounter;
  readonly #cells = new Map<string, Cell>();
  #overflow: Cell | undefined;

  constructor(instrument: Counter | UpDownCounter) {
    this.#instrument = instrument;
  }

  /** The cell for `key`, if there is one; else call {@link open}. */
  cell(key: string): PendingCell | undefined {
    return this.#cells.get(key);
  }

  /** A new cell for `key` with `attributes` (not copied: pass a fresh object). */
  open(key: string, attributes: Attributes): PendingCell {
    if (this.#cells.size >= maxAttributeSets) {
      return (this.#overflow ??= { attributes: overflowAttributes, delta: 0, reported: false });
    }
    const cell: Cell = { attributes, delta: 0, reported: false };
    this.#cells.set(key, cell);
    return cell;
  }

  /** Hands every sum since the last flush to the instrument. */
  flush(): void {
    for (const cell of this.#cells.values()) flushCell(this.#instrument, cell);
    if (this.#overflow !== undefined) flushCell(this.#instrument, this.#overflow);
  }
}

/**
 * A cell's first flush adds even a zero: an UpDownCounter that went up and back down between two
 * collections (a request queued and admitted) must still show its series, at 0, not be absent.
 */
function flushCell(instrument: Counter | UpDownCounter, cell: Cell): void {
  if (cell.delta === 0 && cell.reported) return;
  cell.reported = true;
  const delta = cell.delta;
  cell.delta = 0;
  instrument.add(delta, cell.attributes);
}
