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
import { AttributeCells } from './attribute-cells.js';

export { maxAttributeSets } from './attribute-cells.js';

/** One attribute set's sum since the last flush. */
export interface PendingCell {
  delta: number;
}

interface Cell extends PendingCell {
  readonly attributes: Attributes;
  /** Handed to the instrument at least once: its series exists in every collection since. */
  reported: boolean;
}

/** The sums of one instrument. */
export class PendingSums {
  readonly #instrument: Counter | UpDownCounter;
  readonly #cells = new AttributeCells<Cell>((attributes) => ({
    attributes,
    delta: 0,
    reported: false,
  }));

  constructor(instrument: Counter | UpDownCounter) {
    this.#instrument = instrument;
  }

  /** The cell for `key`, if there is one; else call {@link open}. */
  cell(key: string): PendingCell | undefined {
    return this.#cells.cell(key);
  }

  /** A new cell for `key` with `attributes` (not copied: pass a fresh object). */
  open(key: string, attributes: Attributes): PendingCell {
    return this.#cells.open(key, attributes);
  }

  /** Hands every sum since the last flush to the instrument. */
  flush(): void {
    this.#cells.forEach((cell) => flushCell(this.#instrument, cell));
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
