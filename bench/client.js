#!/usr/bin/env node
// `npm run bench:client`: what the caller's obligations cost (issue: spillway/client).
//  1. dependency.fetch over a bare fetch against a loopback keep-alive server running in a
//     child process (target: ≤ 5 % per call);
//  2. retry + budget over a bare async call when the first attempt succeeds (target: ≤ 200 ns);
//  3. dependency.call over a bare async call (the whole per-call overhead, without a network).
// Cases of a group run interleaved in one process (BENCHMARKS.md rule 4).
// Usage: node bench/client.js [--rounds N] [--json]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { dependency } from '../dist/client/index.js';
import { retry, retryBudget } from '../dist/index.js';
import { runGroup, table } from './micro.js';
import { startOkServer } from './ok-server.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, json: { type: 'boolean', default: false } },
});
const rounds = Number(values.rounds);

// The server lives in its own process, so its CPU does not dilute the client's cost.
const { url, child } = await startOkServer();

const one = () => Promise.resolve(1);

/** @type {import('./micro.js').Group[]} */
const groups = [
  {
    name: 'dependency.fetch over bare fetch (loopback keep-alive, server in a child process)',
    note: 'One request at a time; each op reads the 2-byte body. Target: the first Spillway row ≤ 1.05 × bare. A loopback fetch varies by ±20 % from one moment to the next here, so each round times 250 ms of every case.',
    targetMs: 250,
    cases: [
      {
        name: 'bare fetch(url)',
        peer: true,
        kind: 'async',
        make: () => async () => (await fetch(url)).arrayBuffer(),
      },
      {
        // What the contract itself puts on the wire: the propagation fields a default call sends.
        name: 'bare fetch(url) with the two propagation fields',
        peer: true,
        kind: 'async',
        make: () => {
          const init = { headers: { 'spillway-criticality': 'critical', 'spillway-attempt': '1' } };
          return async () => (await fetch(url, init)).arrayBuffer();
        },
      },
      {
        // …and with a deadline: its field, and a signal that would cancel the request.
        name: 'bare fetch(url) with three fields and an abort signal',
        peer: true,
        kind: 'async',
        make: () => async () => {
          const controller = new AbortController();
          const timer = setTimeout(() => controller.abort(), 5_000);
          const headers = {
            'spillway-criticality': 'sheddable',
            'spillway-attempt': '1',
            'spillway-deadline': '5000',
          };
          try {
            return await (await fetch(url, { headers, signal: controller.signal })).arrayBuffer();
          } finally {
            clearTimeout(timer);
          }
        },
      },
      {
        name: 'dependency.fetch(url), defaults',
        kind: 'async',
        make: () => {
          const dep = dependency({ name: 'bench' });
          return async () => (await dep.fetch(url)).arrayBuffer();
        },
      },
      {
        name: 'dependency.fetch(url, init, { deadline: 5000, criticality })',
        kind: 'async',
        make: () => {
          const dep = dependency({ name: 'bench' });
          const options = { deadline: 5_000, criticality: 'sheddable' };
          return async () => (await dep.fetch(url, undefined, options)).arrayBuffer();
        },
      },
      {
        name: 'dependency.fetch(url), breaker and throttle off',
        kind: 'async',
        make: () => {
          const dep = dependency({ name: 'bench', breaker: false, throttle: false });
          return async () => (await dep.fetch(url)).arrayBuffer();
        },
      },
    ],
  },
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
try {
  for (const group of groups) {
    const results = await runGroup(group, {
      rounds,
      targetMs: group.targetMs ?? 60,
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
} finally {
  child.kill();
}
if (values.json) console.log(JSON.stringify({ machine, groups: all }, null, 2));
else console.log(out.join('\n'));
