/**
 * Option checks for the Redis store: core's validators (so a bad option is worded as every
 * factory words it), and the one check that is the store's own, a key prefix.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';

export {
  clockLike,
  integerInRange,
  nonEmptyString,
  nonNegativeInteger,
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../core/internal/validate.js';

/** A string usable in keys: non-empty, no braces (they would break the hash tag). */
export function keyPrefix(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || /[{}]/.test(value)) {
    throw new SpillwayConfigError(option, 'a non-empty string without { or }', value);
  }
  return value;
}
