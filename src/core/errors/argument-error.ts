/** Thrown when a method receives an argument that could never be valid (e.g. `tryTake(0)`). */
import { describe } from './config-error.js';
import { errorCodes } from './codes.js';
import { SpillwayError } from './spillway-error.js';

/** A method argument is out of range; the message names it and echoes the value. */
export class SpillwayArgumentError extends SpillwayError {
  static override readonly code = errorCodes.invalidArgument;
  /** The argument's name. */
  readonly argument: string;
  /** The value that was rejected. */
  readonly value: unknown;

  constructor(argument: string, expected: string, value: unknown) {
    super(
      errorCodes.invalidArgument,
      `Expected \`${argument}\` to be ${expected}, got ${describe(value)}`,
    );
    this.argument = argument;
    this.value = value;
  }
}
