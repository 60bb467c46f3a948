/**
 * Argument checks for the stream helpers that core's validators do not cover (a signal, a flag,
 * a function, an iterable, a writable). Each returns the value and throws a
 * `SpillwayConfigError` naming the argument and echoing the value, worded like core's.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';

/** `undefined` or an `AbortSignal`. */
export function optionalSignal(option: string, value: unknown): AbortSignal | undefined {
  if (value !== undefined && !(value instanceof AbortSignal)) {
    throw new SpillwayConfigError(option, 'an AbortSignal', value);
  }
  return value;
}

/** `undefined` (→ `fallback`) or a boolean. */
export function optionalBoolean(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new SpillwayConfigError(option, 'a boolean', value);
  return value;
}

/** A function. */
export function functionArgument<F>(option: string, value: F): F {
  if (typeof value !== 'function') throw new SpillwayConfigError(option, 'a function', value);
  return value;
}

/** Something `for await` accepts: an async iterable or a sync one. */
export function iterableArgument<T>(
  option: string,
  value: AsyncIterable<T> | Iterable<T>,
): AsyncIterable<T> | Iterable<T> {
  const v = value as Partial<AsyncIterable<T> & Iterable<T>> | null | undefined;
  if (
    v === null ||
    v === undefined ||
    (typeof v[Symbol.asyncIterator] !== 'function' && typeof v[Symbol.iterator] !== 'function')
  ) {
    throw new SpillwayConfigError(option, 'an iterable or an async iterable', value);
  }
  return value;
}
