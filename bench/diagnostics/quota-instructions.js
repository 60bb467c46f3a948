#!/usr/bin/env node
// A diagnostic of bench/quota.js (the verdict is its time per admitted request): the same cases
// counted in instructions under callgrind (lib/callgrind.js). Each case runs in a process of its
// own (bench/lib/quota-cases.js as the child): W warm-up calls, the counters zeroed, N calls,
// the count read.
// Usage: node bench/diagnostics/quota-instructions.js [--calls 100000] [--warmup 50000]
//          [--only admit|decide] [--dist DIR] [--json]
import { parseArgs } from 'node:util';
import {
  callgrindDir,
  countInstructions,
  message,
  requireValgrind,
  stillCompilingNote,
  twoAtATime,
} from '../lib/callgrind.js';
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
requireValgrind('bench/quota.js');
const counts = callgrindDir('quota');
const child = new URL('../lib/quota-cases.js', import.meta.url).pathname;

async function count([kind, name]) {
  const args = [child, kind, name, values.dist, values.warmup, String(calls)];
  const { instructions, compiler } = await countInstructions(
    { dir: counts.dir, label: `${kind}_${name}`, args },
    async (p, zero) => {
      await message(p, (m) => m.ready === true);
      zero();
      const done = message(p, (m) => m.done === true);
      p.send('go');
      await done;
    },
  );
  return { total: instructions / calls, compiler: compiler / calls };
}

const kinds = values.only === undefined ? ['admit', 'decide'] : [values.only];
const jobs = [
  ...Object.keys(admitCases).map((name) => ['admit', name]),
  ...Object.keys(quotas).map((name) => ['decide', name]),
].filter(([kind]) => kinds.includes(kind));
const byJob = await twoAtATime(jobs, count, (job) => job[1]);
const results = new Map([...byJob].map(([job, v]) => [job.join(':'), v.total]));
counts.done();
const notWarm = stillCompilingNote(
  [...byJob].map(([job, v]) => ({ name: job.join(':'), ...v })),
  'call',
);

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
if (notWarm !== '') out.push(notWarm);
if (values.json) console.log(JSON.stringify(Object.fromEntries(results), null, 2));
else console.log(out.join('\n'));
