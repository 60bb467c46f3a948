#!/usr/bin/env node
// A diagnostic of the caller-overhead target (the verdict is bench/client-cpu.js): bytes
// allocated per call — what a bare fetch, the same fetch with the propagation fields, and
// dependency.fetch allocate on the JavaScript heap, and what Spillway's own work adds without
// the network (the stub rows of bench/diagnostics/client-instructions.js). Every byte a call
// allocates is paid again in the collector's time: a scavenge runs every few MB of allocation.
// Each case runs in a process of its own under V8's --trace-gc-nvp, which prints, for every
// collection, the bytes allocated since the one before; after the warm-up calls a full GC is
// forced, and the `allocated=` of every collection during the counted calls is summed. The
// allocation after the last collection is not seen, so a case is counted over enough calls for
// dozens of collections (the figure is then good to a few per cent of a bare fetch's, and to a
// few bytes on the stub rows, which repeat exactly).
// Usage: node bench/diagnostics/client-alloc.js --help
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { fetchCases, stubCases } from '../lib/client-cases.js';
import { startOkServer } from '../lib/ok-server.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '50000' },
    'stub-calls': { type: 'string', default: '200000' },
    warmup: { type: 'string', default: '4000' },
    only: { type: 'string' },
    dist: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
    // Internal: the child process runs this case against this URL.
    case: { type: 'string' },
    url: { type: 'string' },
  },
});
if (values.help) {
  console.log(`Usage: node bench/diagnostics/client-alloc.js [options]

Bytes allocated on the JavaScript heap per call, one process per case, from V8's --trace-gc-nvp.

  --calls N       counted calls of each network case (default 50000)
  --stub-calls N  counted calls of each stub case (default 200000)
  --warmup N      calls made first and not counted (default 4000)
  --only a,b      only the cases whose names contain one of these
  --dist DIR      measure another build of Spillway (e.g. a copy of dist/ made before a change)
  --json          machine-readable output`);
  process.exit(0);
}

const clientUrl =
  values.dist === undefined
    ? new URL('../../dist/client/index.js', import.meta.url).href
    : pathToFileURL(join(values.dist, 'client/index.js')).href;
const loadDependency = async () => (await import(clientUrl)).dependency;
const cases = {
  ...fetchCases({ loadDependency, deadlineMs: 5_000 }),
  ...stubCases({ loadDependency, deadlineMs: 5_000 }),
};
const isStub = (name) => name.startsWith('stub: ');

function count(name, text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name} must be a positive integer, not ${text}`);
  return n;
}

if (values.case !== undefined) {
  // The measured process.
  const make = cases[values.case];
  if (make === undefined) throw new Error(`no case ${values.case}`);
  const call = await make(values.url);
  const calls = count('--calls', values.calls);
  for (let i = 0; i < count('--warmup', values.warmup); i++) await call();
  globalThis.gc();
  process.stderr.write('\nspillway-alloc: start\n');
  for (let i = 0; i < calls; i++) await call();
  process.stderr.write('\nspillway-alloc: end\n');
  process.exit(0);
}

const names = Object.keys(cases).filter(
  (name) =>
    values.only === undefined || values.only.split(',').some((part) => name.includes(part.trim())),
);
if (names.length === 0) throw new Error(`no case matches --only ${values.only}`);
const { url, child: server } = await startOkServer();
const rows = [];
try {
  for (const [i, name] of names.entries()) {
    process.stderr.write(`\r${i + 1}/${names.length} ${name}`.padEnd(100));
    const calls = isStub(name)
      ? count('--stub-calls', values['stub-calls'])
      : count('--calls', values.calls);
    rows.push({ name, calls, ...(await measure(name, calls)) });
  }
} finally {
  server.kill();
}
process.stderr.write('\n');

if (values.json) {
  console.log(JSON.stringify({ node: process.version, rows }, null, 2));
} else {
  console.log(
    `Node ${process.version}; bytes allocated on the JS heap per call (sum of --trace-gc-nvp's allocated= over the collections during the counted calls ÷ calls).\n`,
  );
  console.log('| case | calls | collections | bytes per call |');
  console.log('|---|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.calls} | ${r.collections} | ${Math.round(r.bytesPerCall)} |`);
  }
  const reference = rows.find((r) => r.name.startsWith('stub: a fetch'));
  for (const r of rows.filter((row) => isStub(row.name) && row !== reference)) {
    if (reference === undefined) break;
    console.log(
      `\nSpillway's own allocation, ${r.name.slice(6)}: ${Math.round(r.bytesPerCall - reference.bytesPerCall)} bytes per call`,
    );
  }
}

/** Runs one case in a process of its own and sums the allocation V8 reports. */
function measure(name, calls) {
  const script = fileURLToPath(import.meta.url);
  const args = ['--expose-gc', '--trace-gc-nvp', script, '--case', name, '--url', url];
  args.push('--calls', String(calls), '--warmup', values.warmup);
  if (values.dist !== undefined) args.push('--dist', values.dist);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`case ${name} exited with ${code}:\n${output}`));
      const start = output.indexOf('spillway-alloc: start');
      const end = output.indexOf('spillway-alloc: end');
      if (start < 0 || end < start) return reject(new Error(`case ${name}: no markers`));
      let bytes = 0;
      let collections = 0;
      for (const m of output.slice(start, end).matchAll(/allocated=(\d+)/g)) {
        bytes += Number(m[1]);
        collections++;
      }
      resolve({ collections, bytesPerCall: bytes / calls });
    });
  });
}
