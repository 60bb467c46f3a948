// What the scripts tell a user who asks for help or gives a bad option.
import { readFileSync } from 'node:fs';

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
