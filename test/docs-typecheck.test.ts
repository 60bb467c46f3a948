// Every ```ts block of the README and docs/*.md typechecks, as a user's TypeScript would see
// it: strict, against the built package (imports of 'spillway' resolve to this package by
// self-reference, through package.json's exports, to dist/*.d.ts). A block that is
// deliberately a fragment says why in `<!-- not-typechecked: reason -->` just above it.
// One program for all blocks, so the compiler loads the libraries' types once.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks, documentationFiles, root, type CodeBlock } from './helpers/markdown-blocks.js';

const dir = join(root, 'test-artifacts', 'docs-typecheck');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const blocks = documentationFiles()
  .flatMap(codeBlocks)
  .filter((b) => b.lang === 'ts' || b.lang === 'typescript');
const skipped = blocks.filter((b) => b.note?.startsWith('not-typechecked') === true);
const checked = blocks.filter((b) => !skipped.includes(b));

/** The repository's own compiler options (strict and the rest), without emitting anything. */
function compilerOptions(): ts.CompilerOptions {
  const file = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(file, (f) => ts.sys.readFile(f));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, file);
  return { ...parsed.options, noEmit: true, declaration: false, declarationMap: false };
}

/** `docs/client.md:40: TS2339 Property 'signal' does not exist …` for each diagnostic. */
function where(d: ts.Diagnostic, byFile: ReadonlyMap<string, CodeBlock>): string {
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  const block = d.file === undefined ? undefined : byFile.get(d.file.fileName);
  if (d.file === undefined || block === undefined) {
    return `${d.file?.fileName ?? '(no file)'}: TS${d.code} ${text}`;
  }
  const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
  return `${block.file}:${block.line + line}: TS${d.code} ${text}`;
}

describe('TypeScript in the README and docs', () => {
  it('finds the blocks, and fragments say why they are not checked', () => {
    expect(checked.length).toBeGreaterThanOrEqual(10);
    for (const b of skipped) expect(b.note, `${b.file}:${b.line}`).toMatch(/^not-typechecked: \S/);
    // Kept rare: a fragment a reader cannot check is a fragment that can go wrong unseen.
    expect(skipped.length).toBeLessThanOrEqual(2);
  });

  it('typechecks every block against the built package', () => {
    mkdirSync(dir, { recursive: true });
    const byFile = new Map<string, CodeBlock>();
    for (const b of checked) {
      const file = join(dir, `${b.file.replace(/[/.]/g, '-')}-${b.line}.ts`);
      // `export {}` keeps each block a module of its own (top-level await, its own names).
      writeFileSync(file, `${b.code}export {};\n`);
      byFile.set(file, b);
    }
    const program = ts.createProgram([...byFile.keys()], compilerOptions());
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file === undefined || byFile.has(d.file.fileName))
      .map((d) => where(d, byFile));
    expect(problems).toEqual([]);
  }, 60_000);
});
