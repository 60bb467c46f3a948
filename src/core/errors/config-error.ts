/** Thrown at construction when an option is invalid; names the option and echoes the value. */
import { errorCodes } from './codes.js';
import { SpillwayError } from './spillway-error.js';

/** An option is missing, of the wrong type, or out of range. */
export class SpillwayConfigError extends SpillwayError {
  static override readonly code = errorCodes.invalidOption;
  /** The option's name, e.g. `burst` or `perRoute[0].limit`. */
  readonly option: string;
  /** The value that was rejected. */
  readonly value: unknown;

  constructor(option: string, expected: string, value: unknown) {
    super(
      errorCodes.invalidOption,
      `Expected \`${option}\` to be ${expected}, got ${describe(value)}`,
    );
    this.option = option;
    this.value = value;
  }
}

/** `-1 (number)`, `"abc" (string)`: short, safe for any value. */
export function describe(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  if (text.length > 60) text = `${text.slice(0, 57)}...`;
  return `${text} (${value === null ? 'null' : typeof value})`;
}
