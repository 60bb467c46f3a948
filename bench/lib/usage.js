// What the scripts tell a user who asks for help or gives a bad option.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The script's leading comment (its description and `Usage:` line), without the comment marks. */
export function headerComment(url) {
  const lines = [];
  for (const line of readFileSync(url, 'utf8').split('\n')) {
    if (line.startsWith('#!')) continue;
    if (!line.startsWith('//')) break;
    lines.push(line.replace(/^\/\/ ?/, ''));
  }
  return lines.join('\n');
}

/** Says what is wrong with the options, and exits with status 2 (no stack trace). */
export function usageError(message) {
  console.error(`${message} (--help lists the options)`);
  process.exit(2);
}

/**
 * The script's options (`parseArgs` `options`, `--help`/`-h` added): prints the script's
 * leading comment and exits 0 on `--help`; an unknown or malformed option is a usage error.
 */
export function benchOptions(scriptUrl, options) {
  let values;
  try {
    ({ values } = parseArgs({
      options: { ...options, help: { type: 'boolean', short: 'h', default: false } },
    }));
  } catch (error) {
    usageError(error.message);
  }
  if (values.help) {
    console.log(headerComment(scriptUrl));
    process.exit(0);
  }
  return values;
}
