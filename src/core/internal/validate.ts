/**
 * Option checks shared by every factory. Each returns the value so call sites stay one line,
 * and each throws a {@link SpillwayConfigError} naming the option and echoing the value.
 * Internal: not exported from the package.
 *
 * @module
 */
import { SpillwayConfigError } from '../errors/config-error.js';

/** A finite number > 0 (fractions allowed). */
export function positiveNumber(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new SpillwayConfigError(option, 'a finite number greater than 0', value);
  }
  return value;
}

/** A finite number ≥ 0 (fractions allowed). */
export function nonNegativeNumber(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new SpillwayConfigError(option, 'a finite number of 0 or more', value);
  }
  return value;
}

/** An integer ≥ 1 (safe integer). */
export function positiveInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new SpillwayConfigError(option, 'a positive integer', value);
  }
  return value;
}

/** An integer ≥ 0 (safe integer). */
export function nonNegativeInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new SpillwayConfigError(option, 'an integer of 0 or more', value);
  }
  return value;
}

/** A safe integer in [min, max]. */
export function integerInRange(
  option: string,
  value: unknown,
  [min, max]: readonly [number, number],
): number {
  if (Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max) {
    return value as number;
  }
  throw new SpillwayConfigError(option, `a whole number from ${min} to ${max}`, value);
}

/** A number in [min, max]. */
export function numberInRange(
  option: string,
  value: unknown,
  range: readonly [number, number],
): number {
  const [min, max] = range;
  if (typeof value !== 'number' || !(value >= min && value <= max)) {
    throw new SpillwayConfigError(option, `a number from ${min} to ${max}`, value);
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

/** A non-empty string. */
export function nonEmptyString(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new SpillwayConfigError(option, 'a non-empty string', value);
  }
  return value;
}

/** An object that looks like a {@link Clock} (has `now` and `setTimer`). */
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

/** An options bag: undefined becomes `{}`, anything that is not a plain object is refused. */
export function optionsObject<T extends object>(name: string, value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SpillwayConfigError(name, 'an options object', value);
  }
  return value;
}
