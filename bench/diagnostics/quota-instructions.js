#!/usr/bin/env node
// A diagnostic of bench/quota.js (the verdict is its time per admitted request): the same cases
// counted in instructions under valgrind's callgrind, which do not move when the machine is
// busy. Each case runs in a process of its own (bench/lib/quota-cases.js as the child): W
// warm-up calls, the counters zeroed, N calls, the count read; V8 --single-threaded with its
// young generation fixed at 16 MB, as in http-instructions.js, so compilation and GC land on
// the counted thread alike in every run. Two cases are counted at once.
// Usage: node bench/diagnostics/quota-instructions.js [--calls 100000] [--warmup 50000]
//          [--only admit|decide] [--dist DIR] [--json]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { admitCases, quotas } from '../lib/quota-cases.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    // Only the admission cases, or only the decisions.
    only: { type: 'string' },
    warmup: { type: 'string', default: '50000' },
    dist: { type: 'string', default: 'dist' },
    json: { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  throw new Error("valgrind is not installed (Debian's valgrind package); see bench/quota.js");
}
const dir = mkdtempSync(join(tmpdir(), 'spillway-quota-callgrind-'));
const child = new URL('../lib/quota-cases.js', import.meta.url).pathname;

async function count(kind, name) {
  const prefix = `${kind}_${name.replace(/\W+/g, '_')}`;
  const p = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, `${prefix}.%p`)}`,
      process.execPath,
      '--single-threaded',
      '--min-semi-space-size=16',
      '--max-semi-space-size=16',
      child,
      kind,
      name,
      values.dist,
      values.warmup,
      String(calls),
    ],
    { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
  );
  const next = (field) =>
    new Promise((resolve, reject) => {
      p.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
      p.on('message', (m) => m[field] === true && resolve());
    });
  await next('ready');
  execFileSync('callgrind_control', ['--zero', String(p.pid)], { stdio: 'ignore' });
  const done = next('done');
  p.send('go');
  await done;
  execFileSync('callgrind_control', ['--dump', String(p.pid)], { stdio: 'ignore' });
  p.removeAllListeners('exit');
  p.kill('SIGKILL');
  const file = readdirSync(dir).find((f) => f.startsWith(`${prefix}.${p.pid}.`));
  const summary = /^summary: (\d+)$/m.exec(readFileSync(join(dir, file), 'utf8'));
  return Number(summary[1]) / calls;
}

const kinds = values.only === undefined ? ['admit', 'decide'] : [values.only];
const jobs = [
  ...Object.keys(admitCases).map((name) => ['admit', name]),
  ...Object.keys(quotas).map((name) => ['decide', name]),
].filter(([kind]) => kinds.includes(kind));
const results = new Map();
const queue = [...jobs];
let finished = 0;
async function worker() {
  for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
    results.set(job.join(':'), await count(...job));
    process.stderr.write(`\r${++finished}/${jobs.length} counted (${job[1]})`.padEnd(70));
  }
}
await Promise.all([worker(), worker()]);
process.stderr.write('\n');
rmSync(dir, { recursive: true, force: true });

const out = [
  `Node ${process.version}; instructions per call (user space), ${values.warmup} warm-up calls, then ${calls} counted. Build: ${values.dist}.`,
  '',
];
for (const kind of kinds) {
  const names = kind === 'admit' ? Object.keys(admitCases) : Object.keys(quotas);
  const base = results.get(`${kind}:${names[0]}`);
  out.push(
    kind === 'admit' ? '### Admission of one request' : "### The quota's decision alone",
    '',
    '| case | instructions per call | × first row |',
    '|---|---:|---:|',
  );
  for (const name of names) {
    const v = results.get(`${kind}:${name}`);
    out.push(`| ${name} | ${Math.round(v)} | ${(v / base).toFixed(3)} |`);
  }
  out.push('');
}
if (values.json) console.log(JSON.stringify(Object.fromEntries(results), null, 2));
else console.log(out.join('\n'));
