#!/usr/bin/env node
/**
 * The `spillway` command: dispatches to a subcommand, prints help, and turns mistakes into a
 * message and an exit code instead of a stack trace: 2 for usage errors, 1 for a failure the
 * user can act on, 141 (SIGPIPE's) when whoever read our output has gone.
 *
 * @module
 */
import { constants } from 'node:os';
import { CommandFailure, parseArgsUsageError, UsageError } from './command.js';
import { commands } from './commands.js';

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(await usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    const { createRequire } = await import('node:module');
    const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const load = commands[name];
  if (load === undefined) {
    process.stderr.write(
      `spillway: unknown command '${name}'. Run 'spillway --help' for the list.\n`,
    );
    return 2;
  }
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.help.endsWith('\n') ? command.help : `${command.help}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    return report(name, error);
  }
}

/** Prints why command `name` failed; resolves to its exit code. A stack only for a bug. */
function report(name: string, error: unknown): number {
  const usageError = error instanceof UsageError ? error : parseArgsUsageError(error);
  if (usageError !== undefined) {
    process.stderr.write(
      `spillway ${name}: ${usageError.message}\nRun 'spillway ${name} --help' for its options.\n`,
    );
    return 2;
  }
  if (error instanceof CommandFailure) {
    process.stderr.write(`spillway ${name}: ${error.message}\n`);
    return 1;
  }
  process.stderr.write(`spillway ${name}: ${describe(error)}\n`);
  return 1;
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

async function usage(): Promise<string> {
  const lines = ['Usage: spillway <command> [options]', '', 'Commands:'];
  const names = Object.keys(commands);
  const width = Math.max(8, ...names.map((n) => n.length));
  for (const name of names) {
    const command = await commands[name]!();
    lines.push(`  ${name.padEnd(width)}  ${command.summary}`);
  }
  lines.push('', "Run 'spillway <command> --help' for a command's options.", '');
  return lines.join('\n');
}

// A reader that went away (`spillway demo | head -3`) is not a failure to report, and there
// is no one left to report it to: exit as a pipe's writer killed by SIGPIPE would. The 'exit'
// handlers still run, so the demo's child servers end with it.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(128 + constants.signals.SIGPIPE);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`spillway: ${describe(error)}\n`);
    process.exitCode = 1;
  },
);
