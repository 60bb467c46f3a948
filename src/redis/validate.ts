/**
 * Option checks for the Redis store, with the same wording as core's (``Expected `timeoutMs`
 * to be a finite number greater than 0, got -1 (number)``). Adapters use the public core API
 * only, so these few live here.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';

/** A finite number > 0. */
export function positiveNumber(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new SpillwayConfigError(option, 'a finite number greater than 0', value);
  }
  return value;
}

/** An integer >= 1. */
export function positiveInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new SpillwayConfigError(option, 'a positive integer', value);
  }
  return value;
}

/** An integer >= 0. */
export function nonNegativeInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new SpillwayConfigError(option, 'an integer of 0 or more', value);
  }
  return value;
}

/** One of a fixed set of strings. */
export function oneOf<const T extends string>(
  option: string,
  value: unknown,
  allowed: readonly T[],
): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new SpillwayConfigError(
      option,
      `one of ${allowed.map((a) => `'${a}'`).join(', ')}`,
      value,
    );
  }
  return value as T;
}

/** A string usable in keys: non-empty, no braces (they would break the hash tag). */
export function keyPrefix(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || /[{}]/.test(value)) {
    throw new SpillwayConfigError(option, 'a non-empty string without { or }', value);
  }
  return value;
}

/** An options bag: undefined becomes `{}`, anything that is not a plain object is refused. */
export function optionsObject<T extends object>(name: string, value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SpillwayConfigError(name, 'an options object', value);
  }
  return value;
}

/** Something with the Clock methods the store uses. */
export function clockLike<T>(option: string, value: T): T {
  const v = value as { now?: unknown; setTimer?: unknown; clearTimer?: unknown } | null;
  if (
    typeof v !== 'object' ||
    v === null ||
    typeof v.now !== 'function' ||
    typeof v.setTimer !== 'function' ||
    typeof v.clearTimer !== 'function'
  ) {
    throw new SpillwayConfigError(option, 'a Clock (with now, setTimer and clearTimer)', value);
  }
  return value;
}
