/**
 * Cells kept per attribute set, at most {@link maxAttributeSets} of them: what
 * `pending-sums.ts` and `pending-values.ts` hold between collections.
 *
 * @module
 */
import type { Attributes } from '@opentelemetry/api';

/**
 * The most attribute sets kept per instrument: routes, results, criticalities and dependency
 * names are all bounded by the application, so this is only a backstop, set below the SDK's own
 * default limit (2,000) so that the overflow is marked here. Past it, everything goes to one
 * set marked as the SDK marks its own overflow.
 */
export const maxAttributeSets = 1_000;

const overflowAttributes: Attributes = Object.freeze({ 'otel.metric.overflow': true });

/** One instrument's cells, by a key the owner derives from the attributes. */
export class AttributeCells<C> {
  readonly #make: (attributes: Attributes) => C;
  readonly #cells = new Map<string, C>();
  #overflow: C | undefined;

  /** `make` builds a cell for an attribute set. */
  constructor(make: (attributes: Attributes) => C) {
    this.#make = make;
  }

  /** The cell for `key`, if there is one; else call {@link open}. */
  cell(key: string): C | undefined {
    return this.#cells.get(key);
  }

  /** A new cell for `key` with `attributes` (not copied: pass a fresh object). */
  open(key: string, attributes: Attributes): C {
    if (this.#cells.size >= maxAttributeSets) {
      return (this.#overflow ??= this.#make(overflowAttributes));
    }
    const cell = this.#make(attributes);
    this.#cells.set(key, cell);
    return cell;
  }

  /** Calls `f` with every cell, the overflow last. */
  forEach(f: (cell: C) => void): void {
    for (const cell of this.#cells.values()) f(cell);
    if (this.#overflow !== undefined) f(this.#overflow);
  }
}
