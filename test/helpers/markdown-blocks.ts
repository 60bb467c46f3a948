// The fenced code blocks of the README and docs/*.md, with where each starts and the HTML
// comment just above it (`<!-- example: name -->`, `<!-- not-typechecked: reason -->`), so the
// tests that run or typecheck them can name a failing block by file and line.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const root = new URL('../..', import.meta.url).pathname;

/** One fenced block. */
export interface CodeBlock {
  /** Relative to the repository, e.g. `docs/client.md`. */
  readonly file: string;
  /** The 1-based line of the block's first line of code (the one after the fence). */
  readonly line: number;
  /** The fence's info string, e.g. `ts`, `js`, `sh`, or empty. */
  readonly lang: string;
  readonly code: string;
  /** The text of an HTML comment on the last non-blank line before the fence, if any. */
  readonly note: string | undefined;
}

/** README.md and every docs/*.md, in a stable order. */
export function documentationFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join('docs', f));
  return ['README.md', ...docs];
}

/** The fenced blocks of `file` (relative to the repository). */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const close = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    if (close === -1) throw new Error(`${file}:${i + 1}: a fence that is never closed`);
    blocks.push({
      file: relative(root, join(root, file)),
      line: i + 2,
      lang: open[1]!,
      code: lines.slice(i + 1, close).join('\n') + '\n',
      note: noteAbove(lines, i),
    });
    i = close;
  }
  return blocks;
}

function noteAbove(lines: readonly string[], fence: number): string | undefined {
  let j = fence - 1;
  while (j >= 0 && lines[j]!.trim() === '') j--;
  return /^<!--\s*(.*?)\s*-->$/.exec(lines[j]?.trim() ?? '')?.[1];
}
