#!/usr/bin/env node
// Fails when package.json "exports" and the source folders disagree: every `./<dir>` entry
// needs src/<dir>/index.ts (and "." needs src/index.ts), every src/<dir>/index.ts needs an
// entry, and each entry must point at the dist files tsc emits for it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const problems = [];

const exported = Object.keys(pkg.exports ?? {}).filter((k) => k !== './package.json');
const folders = readdirSync(join(root, 'src'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'core' && d.name !== 'cli')
  .filter((d) => existsSync(join(root, 'src', d.name, 'index.ts')))
  .map((d) => `./${d.name}`);

for (const key of exported) {
  const dir = key === '.' ? '' : key.slice(2);
  const src = join('src', dir, 'index.ts');
  if (!existsSync(join(root, src))) problems.push(`exports["${key}"] has no ${src}`);
  const want = {
    types: `./${join('dist', dir, 'index.d.ts')}`,
    default: `./${join('dist', dir, 'index.js')}`,
  };
  const entry = pkg.exports[key];
  for (const [cond, path] of Object.entries(want)) {
    if (entry?.[cond] !== path)
      problems.push(
        `exports["${key}"].${cond} should be "${path}", is ${JSON.stringify(entry?.[cond])}`,
      );
  }
  const keys = Object.keys(entry ?? {});
  if (keys[0] !== 'types')
    problems.push(`exports["${key}"]: "types" must come first, got ${keys.join(', ')}`);
}
for (const folder of folders) {
  if (!exported.includes(folder))
    problems.push(`src/${folder.slice(2)}/index.ts has no exports["${folder}"] entry`);
}
if (!exported.includes('.')) problems.push('exports["."] is missing');

if (problems.length > 0) {
  console.error(`check-exports: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-exports: ${exported.length} entries match src/ (${exported.join(', ')})`);
