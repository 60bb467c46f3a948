#!/usr/bin/env node
// `npm run bench:client`: what the caller's obligations cost without a network.
//  1. retry + budget over a bare async call when the first attempt succeeds (target: ≤ 200 ns);
//  2. dependency.call over a bare async call (the whole per-call bookkeeping, no target);
//  3. a call refused at once by an open breaker, beside cockatiel's and opossum's open breakers
//     and a bare rejection: what shedding costs the caller when it matters, under overload;
//  4. a call the dependency refuses (its work rejects with a 503) through a closed breaker that
//     records it, beside cockatiel's: the common way out of a call under overload.
// The caller-overhead target over a real fetch is bench/client-cpu.js.
// Cases of a group run interleaved in one process (BENCHMARKS.md rule 4).
// Usage: node bench/client.js [--rounds N] [--json]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { dependency } from '../dist/client/index.js';
import { retry, retryBudget } from '../dist/index.js';
import { circuitBreaker, ConsecutiveBreaker, handleAll } from 'cockatiel';
import CircuitBreaker from 'opossum';
import { runGroup, table } from './lib/micro.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, json: { type: 'boolean', default: false } },
});
const rounds = Number(values.rounds);

const one = () => Promise.resolve(1);
const noop = () => {};
const overloaded = Object.assign(new Error('503'), { status: 503 });
const failing = () => Promise.reject(overloaded);

/** A dependency whose breaker has opened (5 failures in a row) and stays open for the run. */
async function openDependency() {
  const dep = dependency({
    name: 'bench',
    breaker: { openMs: 3_600_000 },
    retry: false,
  });
  for (let i = 0; i < 40; i++) await dep.call(failing).catch(noop);
  return dep;
}

/** cockatiel's breaker, opened by one failure and held open for the run. */
async function openCockatiel() {
  const policy = circuitBreaker(handleAll, {
    halfOpenAfter: 3_600_000,
    breaker: new ConsecutiveBreaker(1),
  });
  await policy.execute(failing).catch(noop);
  return policy;
}
const [openDep, openPeer] = [await openDependency(), await openCockatiel()];

// Breakers that record every failure and never open, so each call runs its whole failure path.
const neverOpens = Number.MAX_SAFE_INTEGER;
const refusedDep = dependency({
  name: 'bench',
  breaker: { trip: { kind: 'consecutive', failures: neverOpens } },
  retry: false,
});
const refusedCockatiel = circuitBreaker(handleAll, {
  halfOpenAfter: 3_600_000,
  breaker: new ConsecutiveBreaker(neverOpens),
});
// opossum is left out: with a breaker that never opens, its failing calls slow down as failures
// accumulate (100 µs a call after 100 of them, 330 µs after 7,000, opossum 9), so its figure
// would say how long the run was.
// opossum's breaker around the same work, opened by hand and held open (no reset timer due).
const openOpossum = new CircuitBreaker(one, { resetTimeout: 3_600_000 });
openOpossum.open();

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
  {
    name: 'a call refused by an open breaker',
    note: 'Every case rejects at once and is caught. Spillway makes its refusal errors without a stack trace (docs/errors.md).',
    cases: [
      {
        name: 'Promise.reject(e).catch()',
        peer: true,
        kind: 'async',
        make: () => () => Promise.reject(overloaded).catch(noop),
      },
      {
        name: 'dependency.call(fn), breaker open',
        kind: 'async',
        make: () => () => openDep.call(one).catch(noop),
      },
      {
        name: 'cockatiel breaker.execute(fn), open',
        peer: true,
        kind: 'async',
        make: () => () => openPeer.execute(one).catch(noop),
      },
      {
        name: 'opossum breaker.fire(), open',
        peer: true,
        kind: 'async',
        make: () => () => openOpossum.fire().catch(noop),
      },
    ],
  },
  {
    name: 'a call the dependency refuses (its work rejects with a 503)',
    note: 'Closed breakers that record the failure and never open; no retry. The work is `() => Promise.reject(e)`.',
    cases: [
      {
        name: 'failing().catch()',
        peer: true,
        kind: 'async',
        make: () => () => failing().catch(noop),
      },
      {
        name: 'dependency.call(failing), retry off',
        kind: 'async',
        make: () => () => refusedDep.call(failing).catch(noop),
      },
      {
        name: 'cockatiel breaker.execute(failing)',
        peer: true,
        kind: 'async',
        make: () => () => refusedCockatiel.execute(failing).catch(noop),
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
