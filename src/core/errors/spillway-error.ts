/**
 * The base of every error Spillway throws. Identity survives two installed copies of the
 * package: `instanceof` checks a `Symbol.for` brand and the `code`, not the prototype chain.
 *
 * @module
 */
import { errorCodes, type SpillwayErrorCode } from './codes.js';

const brand = Symbol.for('spillway.error');

/** Each code's message suffix, built once (errors are made by the thousand under overload). */
const suffixes = new Map<string, string>(Object.values(errorCodes).map((c) => [c, suffix(c)]));

function suffix(code: string): string {
  return ` (${code}, see docs/errors.md#${code.toLowerCase()})`;
}

/**
 * The codes whose errors keep a stack trace: a mistake in the caller's code, which the stack
 * points at. Every other error is an outcome of load (a refusal, a timeout, a give-up), made
 * by the thousand exactly when the process is busiest; a stack would cost more than the rest
 * of the refused call (3–7 µs on Node 20) and say nothing the code, the dependency and the
 * `cause` do not. The contract's "no `Error` with a stack per rejection", on the caller's side.
 */
const codesWithStack: ReadonlySet<string> = new Set([
  errorCodes.invalidOption,
  errorCodes.invalidArgument,
]);

/** Whether the stack's depth can be set (not where `Error` was frozen or made an accessor). */
const stackLimitWritable =
  Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')?.writable === true;

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
    const text = message + (suffixes.get(code) ?? suffix(code));
    const cause = options?.cause === undefined ? undefined : { cause: options.cause };
    if (!stackLimitWritable || codesWithStack.has(code)) super(text, cause);
    else {
      // No frames captured (the stack is the header line alone); the setting is restored at
      // once, and Error's constructor cannot throw with a string message.
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      super(text, cause);
      Error.stackTraceLimit = limit;
    }
    this.code = code;
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

// The brand every Spillway error carries, once on the prototype rather than on each instance
// (non-enumerable, so it never shows when an error is logged or serialised).
Object.defineProperty(SpillwayError.prototype, brand, { value: true });

/** True for any error thrown by any installed copy of Spillway. */
export function isSpillwayError(value: unknown): value is SpillwayError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[brand] === true
  );
}
