#!/usr/bin/env node
// A diagnostic of the caller-overhead target (the verdict is bench/client-cpu.js): the
// dependency.fetch cases in wall time, timed in rounds by the micro-benchmark runner (each round
// times every case for --round-ms in a fresh random order, in one process). A loopback fetch on
// a shared VM moves far more from one round to the next than the few per cent the target is
// about, so read this as a quick look across all the cases, not as the verdict.
// Usage: node bench/diagnostics/client-rounds.js [--rounds 15] [--round-ms 250] [--only a,b]
//          [--json]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { fetchCases } from '../lib/client-cases.js';
import { runGroup, table } from '../lib/micro.js';
import { startOkServer } from '../lib/ok-server.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    'round-ms': { type: 'string', default: '250' },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const roundMs = Number(values['round-ms']);
if (!Number.isInteger(rounds) || rounds < 1 || !(roundMs > 0)) {
  throw new Error(`--rounds must be a positive integer and --round-ms positive`);
}

const all = fetchCases({
  loadDependency: async () => (await import('../../dist/client/index.js')).dependency,
  deadlineMs: 5_000,
});
const bareCase = 'bare fetch(url)';
const wanted = values.only?.split(',');
const names = Object.keys(all).filter(
  (name) => wanted === undefined || name === bareCase || wanted.some((w) => name.includes(w)),
);

// The server lives in its own process, so its CPU does not dilute the client's cost.
const { url, child } = await startOkServer();
try {
  /** @type {import('../lib/micro.js').Group} */
  const group = {
    name: 'dependency.fetch over bare fetch (loopback keep-alive, server in a child process)',
    note: `One request at a time; each op reads the 2-byte body; ${roundMs} ms of every case per round.`,
    cases: [],
  };
  for (const name of names) {
    const call = await all[name](url);
    group.cases.push({
      name,
      peer: !name.startsWith('dependency'),
      kind: 'async',
      make: () => call,
    });
  }
  const results = await runGroup(group, {
    rounds,
    targetMs: roundMs,
    onProgress: (r, n) => process.stderr.write(`\rround ${r}/${n}   `),
  });
  process.stderr.write('\n');
  const machine = `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Node ${process.version}`;
  if (values.json) console.log(JSON.stringify({ machine, rounds, results }, null, 2));
  else
    console.log(`Machine: ${machine}. Rounds: ${rounds}, interleaved.\n\n${table(group, results)}`);
} finally {
  child.kill();
}
