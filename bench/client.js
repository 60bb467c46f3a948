#!/usr/bin/env node
// `npm run bench:client`: what the caller's obligations cost without a network.
//  1. retry + budget over a bare async call when the first attempt succeeds (target: ≤ 200 ns);
//  2. dependency.call over a bare async call (the whole per-call bookkeeping, no target).
// The caller-overhead target over a real fetch is bench/client-cpu.js.
// Cases of a group run interleaved in one process (BENCHMARKS.md rule 4).
// Usage: node bench/client.js [--rounds N] [--json]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { dependency } from '../dist/client/index.js';
import { retry, retryBudget } from '../dist/index.js';
import { runGroup, table } from './lib/micro.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, json: { type: 'boolean', default: false } },
});
const rounds = Number(values.rounds);

const one = () => Promise.resolve(1);

/** @type {import('./lib/micro.js').Group[]} */
const groups = [
  {
    name: 'retry + budget over a bare call (first attempt succeeds)',
    note: 'The work is `() => Promise.resolve(1)`. Target: retry + budget ≤ bare + 200 ns.',
    cases: [
      { name: 'await fn()', peer: true, kind: 'async', make: () => async () => await one() },
      {
        name: 'await retry(fn, { budget, idempotent })',
        kind: 'async',
        make: () => {
          const options = { budget: retryBudget(), idempotent: true };
          return () => retry(one, options);
        },
      },
      {
        name: 'await retry(fn, { budget: ratio policy })',
        kind: 'async',
        make: () => {
          const options = { budget: retryBudget({ policy: 'ratio' }), idempotent: true };
          return () => retry(one, options);
        },
      },
      { name: 'await retry(fn)', kind: 'async', make: () => () => retry(one) },
    ],
  },
  {
    name: 'dependency.call over a bare call (no network)',
    note: 'The whole per-call cost of the obligations: deadline, breaker, cap, throttle, budget, propagation headers.',
    cases: [
      { name: 'await fn()', peer: true, kind: 'async', make: () => async () => await one() },
      {
        name: 'dependency.call(fn), defaults',
        kind: 'async',
        make: () => {
          const dep = dependency({ name: 'bench' });
          return () => dep.call(one);
        },
      },
      {
        name: 'dependency.call(fn, { deadline: 5000 })',
        kind: 'async',
        make: () => {
          const dep = dependency({ name: 'bench' });
          const options = { deadline: 5_000 };
          return () => dep.call(one, options);
        },
      },
    ],
  },
];

const machine = `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Node ${process.version}`;
const all = [];
const out = [
  `Machine: ${machine}. Rounds: ${rounds}, interleaved. Command: \`npm run bench:client\`.`,
  '',
];
for (const group of groups) {
  const results = await runGroup(group, {
    rounds,
    targetMs: 60,
    onProgress: (r, n) => process.stderr.write(`\r${group.name}: round ${r}/${n}   `),
  });
  process.stderr.write('\n');
  all.push({ group: group.name, results });
  const base = results.find((r) => r.peer) ?? results[0];
  const lines = results
    .filter((r) => !r.peer)
    .map(
      (r) =>
        `- ${r.name}: ${(r.median / base.median).toFixed(3)} × bare, ` +
        `${(r.median - base.median).toFixed(0)} ns/op more`,
    );
  out.push(table(group, results), '', ...lines, '');
}
if (values.json) console.log(JSON.stringify({ machine, groups: all }, null, 2));
else console.log(out.join('\n'));
