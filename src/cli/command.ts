/**
 * The shape of a `spillway` subcommand. Each lives in its own file and is loaded only when run,
 * so `spillway --help` stays fast and one command's dependencies never load for another.
 *
 * @module
 */

/** A subcommand of the `spillway` CLI. */
export interface Command {
  /** One line for `spillway --help`. */
  readonly summary: string;
  /** The full `spillway <name> --help` text. */
  readonly help: string;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  run(argv: readonly string[]): Promise<number>;
}

/** Thrown for bad command-line input: printed without a stack, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
