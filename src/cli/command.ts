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

/**
 * Thrown when a well-formed command cannot do its job for a reason the user can act on (nothing
 * listening at the URL, a host name that does not resolve): printed without a stack, exit code 1.
 */
export class CommandFailure extends Error {
  override readonly name = 'CommandFailure';
}

/**
 * `node:util`'s `parseArgs` complaint (an `ERR_PARSE_ARGS_*` error) as a {@link UsageError};
 * undefined for any other error.
 */
export function parseArgsUsageError(error: unknown): UsageError | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) return undefined;
  // Node tells, after an unknown option, how to pass a positional argument that starts with
  // '-'; none of our commands takes one, so it only buries what went wrong.
  const message = (error as Error).message.replace(/\. To specify a positional[\s\S]*$/, '');
  // Lower case, as our own messages are: they follow `spillway <command>: `.
  return new UsageError(message.charAt(0).toLowerCase() + message.slice(1));
}
