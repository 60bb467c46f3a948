#!/usr/bin/env node
/**
 * The `spillway` command: dispatches to a subcommand, prints help, and turns usage errors into
 * a message and exit code 2 instead of a stack trace.
 *
 * @module
 */
import { UsageError } from './command.js';
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
  return command.run(rest);
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(
        `spillway: ${error.message}\nRun 'spillway <command> --help' for usage.\n`,
      );
      process.exitCode = 2;
    } else {
      process.stderr.write(
        `spillway: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = 1;
    }
  },
);
