/**
 * The base of every error Spillway throws. Identity survives two installed copies of the
 * package: `instanceof` checks a `Symbol.for` brand and the `code`, not the prototype chain.
 *
 * @module
 */
import type { SpillwayErrorCode } from './codes.js';

const brand = Symbol.for('spillway.error');

/** Options every Spillway error accepts. */
export interface SpillwayErrorOptions {
  readonly cause?: unknown;
}

/** Base class of every Spillway error; match on `code`, which never changes meaning. */
export class SpillwayError extends Error {
  /** The subclass's code; the base class has none, so `instanceof SpillwayError` matches all. */
  static readonly code: SpillwayErrorCode | undefined = undefined;

  /** Stable machine-readable code, `SPILLWAY_E_*`. */
  readonly code: SpillwayErrorCode;

  constructor(code: SpillwayErrorCode, message: string, options?: SpillwayErrorOptions) {
    super(
      `${message} (${code}, see docs/errors.md#${code.toLowerCase()})`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = code;
    Object.defineProperty(this, brand, { value: true });
  }

  override get name(): string {
    return this.constructor.name;
  }

  /**
   * The codes an abstract subclass stands for (e.g. every rejection), so `instanceof` on it
   * also works across installed copies.
   */
  static readonly family: readonly SpillwayErrorCode[] | undefined = undefined;

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (!isSpillwayError(value)) return false;
    if (this === SpillwayError) return true;
    const own = this as { code?: SpillwayErrorCode; family?: readonly SpillwayErrorCode[] };
    if (Object.hasOwn(this, 'code') && own.code !== undefined) return value.code === own.code;
    if (Object.hasOwn(this, 'family') && own.family !== undefined) {
      return own.family.includes(value.code);
    }
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

/** True for any error thrown by any installed copy of Spillway. */
export function isSpillwayError(value: unknown): value is SpillwayError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[brand] === true
  );
}
