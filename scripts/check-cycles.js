#!/usr/bin/env node
// Fails when the source files import each other in a cycle (type-only imports included): the
// house must be drawable from its imports as layers, folder by folder and file by file.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(new URL('../src', import.meta.url).pathname);
const files = readdirSync(root, { recursive: true, withFileTypes: true })
  .filter((d) => d.isFile() && d.name.endsWith('.ts') && !d.name.endsWith('.test.ts'))
  .map((d) => join(d.parentPath ?? d.path, d.name));
const graph = new Map(
  files.map((file) => {
    const text = readFileSync(file, 'utf8');
    const deps = [...text.matchAll(/(?:import|export)[^'";]*?from\s+'(\.[^']+)'/g)].map((m) =>
      resolve(dirname(file), m[1].replace(/\.js$/, '.ts')),
    );
    return [file, deps];
  }),
);

const cycles = [];
const state = new Map(); // 1: on the path, 2: done
function visit(file, path) {
  state.set(file, 1);
  path.push(file);
  for (const dep of graph.get(file)) {
    if (!graph.has(dep)) continue;
    if (state.get(dep) === 1) cycles.push([...path.slice(path.indexOf(dep)), dep]);
    else if (state.get(dep) === undefined) visit(dep, path);
  }
  path.pop();
  state.set(file, 2);
}
for (const file of files) if (state.get(file) === undefined) visit(file, []);

if (cycles.length > 0) {
  console.error(`${cycles.length} import cycle(s) in src/:`);
  for (const c of cycles) console.error(`  ${c.map((f) => relative(root, f)).join(' → ')}`);
  process.exit(1);
}
console.log(`no import cycles among ${files.length} source files`);
