#!/usr/bin/env node
// `npm run bench:quota`: what a route's quota costs per admitted request when it has several
// policies and numbers per client (issue 27, item 1: two policies, one of them with a number
// given by a function, ≤ 1.15 × one fixed policy). Each case is the guard's whole admission of
// one request on the system clock — `guard.admit(req, res)` (request fields, the quota, the
// route's concurrency limit, the context with its timer and disconnect watch, the RateLimit
// fields set on the response) and `finish()` — over 10,000 client keys visited round-robin,
// every request admitted (bench/lib/quota-cases.js); the cases run interleaved in one process
// (bench/lib/micro.js) and the ratio is against the first row. A second group times the quota's
// decision alone, the part that differs between the cases. On a busy machine the per-round
// spread is wide: bench/diagnostics/quota-instructions.js counts the same cases in
// instructions, which do not move with the machine's load.
// Usage: node bench/quota.js [--rounds N] [--json] [--dist DIR]
import { parseArgs } from 'node:util';
import { runGroups } from './lib/micro.js';
import { admitCases, admitOne, decideOne, load, quotas } from './lib/quota-cases.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    json: { type: 'boolean', default: false },
    // Another build of Spillway to measure (e.g. a private build, or a copy of dist/).
    dist: { type: 'string', default: 'dist' },
  },
});
const rounds = Number(values.rounds);
const lib = await load(values.dist);

/** @type {import('./lib/micro.js').Group[]} */
const groups = [
  {
    name: 'Admission of one request on a quota route (per admitted request)',
    note: 'Target: two policies, one number per client ≤ 1.15 × one fixed policy. RateLimit fields on every response (the default) unless the case says otherwise.',
    cases: Object.keys(admitCases).map((name) => ({
      name,
      kind: 'sync',
      make: () => admitOne(lib, name),
    })),
  },
  {
    name: "The quota's decision alone (diagnostic)",
    note: '`RouteQuota.decide(key, req)`, with the RateLimit field formatted for the response.',
    cases: Object.keys(quotas).map((name) => ({
      name,
      kind: 'sync',
      make: () => decideOne(lib, name),
    })),
  },
];

await runGroups(groups, {
  rounds,
  json: values.json,
  about: `Build: ${values.dist}. Command: \`node bench/quota.js\`.`,
});
