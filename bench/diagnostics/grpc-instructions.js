#!/usr/bin/env node
// A diagnostic of the gRPC cost bench (the verdict is bench/grpc-cost.js, in CPU time): the same
// servers counted in instructions under callgrind (lib/callgrind.js says how, and why the
// collector's share is counted apart). Each server answers W calls to warm up, its counters are
// zeroed, it answers N more over the same HTTP/2 session (lib/grpc-load.js, the same closed
// loop), and the count is read. The call holding a capacity case's only slot comes from this
// process.
// Usage: node bench/diagnostics/grpc-instructions.js [--calls 5000] [--warmup 10000]
//          [--concurrency 32] [--only a,b] [--dist dist] [--json]
// --dist: the build the servers load, relative to the repository's root (default dist).
import { parseArgs } from 'node:util';
import {
  callgrindDir,
  countInstructions,
  message,
  requireValgrind,
  stillCompilingNote,
  twoAtATime,
} from '../lib/callgrind.js';
import { grpcBase, pickGrpcCases } from '../lib/grpc-cases.js';
import { grpcLoad, holdOneCall, statusName } from '../lib/grpc-load.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '5000' },
    warmup: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '32' },
    only: { type: 'string' },
    dist: { type: 'string', default: 'dist' },
    json: { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
const warmup = Number(values.warmup);
const concurrency = Number(values.concurrency);
if (!(calls > 0) || !(warmup > 0) || !(concurrency > 0)) {
  throw new Error('--calls, --warmup and --concurrency must be positive numbers');
}
requireValgrind('bench/grpc-cost.js for CPU time');

const cases = pickGrpcCases(values.only);
const counts = callgrindDir('grpc');

async function count(kind) {
  const script = new URL('../lib/grpc-servers.js', import.meta.url).pathname;
  const { instructions, collector, compiler, result } = await countInstructions(
    { dir: counts.dir, label: kind, args: [script, kind, values.dist] },
    async (child, zero) => {
      const { port, hold } = await message(child, (m) => m.port !== undefined);
      const holder = hold ? await holdOneCall(child, port) : undefined;
      const load = grpcLoad(port, { concurrency, channels: 1 });
      await load.ready;
      await load.calls(warmup);
      zero();
      await load.calls(calls);
      load.close();
      holder?.destroy();
      return [...load.counts.entries()].map(([c, n]) => `${statusName(c)}×${n}`).join(' ');
    },
  );
  return {
    perCall: instructions / calls,
    gc: collector / calls,
    compiler: compiler / calls,
    statuses: result,
  };
}

const results = await twoAtATime(cases, count);
counts.done();
const notWarm = stillCompilingNote(
  cases.map((name) => ({ name, total: results.get(name).perCall, ...results.get(name) })),
  'call',
);

const base = results.get(grpcBase);
const rows = cases.map((kind) => {
  const { perCall, gc, statuses } = results.get(kind);
  return {
    kind,
    instructionsPerCall: Math.round(perCall),
    ratio: perCall / base.perCall,
    collectorPerCall: Math.round(gc),
    withoutCollectorRatio: (perCall - gc) / (base.perCall - base.gc),
    statuses,
  };
});
if (values.json) {
  console.log(
    JSON.stringify(
      { node: process.version, dist: values.dist, calls, warmup, concurrency, rows, notWarm },
      null,
      2,
    ),
  );
} else {
  console.log(
    `Node ${process.version}; build ${values.dist}; user-space instructions per call, ${warmup} warm-up and ${calls} counted calls per server, ${concurrency} in flight over one HTTP/2 session.\n`,
  );
  console.log(
    `| server | instructions per call | × ${grpcBase} | of which the collector | × ${grpcBase} without the collector | statuses (all calls) |`,
  );
  console.log('|---|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(
      `| ${r.kind} | ${r.instructionsPerCall.toLocaleString('en')} | ${r.ratio.toFixed(3)} | ${r.collectorPerCall.toLocaleString('en')} | ${r.withoutCollectorRatio.toFixed(3)} | ${r.statuses} |`,
    );
  }
  if (notWarm !== '') console.log(`\n${notWarm}`);
}
