#!/usr/bin/env node
// A diagnostic of the gRPC cost bench (the verdict is bench/grpc-cost.js, in CPU time): the same
// servers counted in instructions, each run under valgrind's callgrind, which counts the
// instructions the server process executes in user space. Unlike CPU time on a shared VM, the
// count repeats from run to run and does not move when the machine is busy. It leaves out the
// kernel's share (the socket reads and writes), so a ratio of counts overstates a ratio of CPU
// times. As http-instructions.js does for S8: V8 runs --single-threaded with its young
// generation fixed at 16 MB (so GC and compilation land on the counted thread alike in every
// run); each server answers W calls to warm up, its counters are zeroed, it answers N more over
// the same HTTP/2 session (lib/grpc-load.js, the same closed loop), and the count is read. Two
// servers run at once (counts do not depend on contention). The call holding a capacity case's
// only slot comes from this process.
// Usage: node bench/diagnostics/grpc-instructions.js [--calls 5000] [--warmup 10000]
//          [--concurrency 32] [--only a,b] [--dist dist] [--json]
// --dist: the build the servers load, relative to the repository's root (default dist).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
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
try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  console.error(
    "valgrind is not installed (Debian's valgrind package); see bench/grpc-cost.js for CPU time",
  );
  process.exit(2);
}

const cases = pickGrpcCases(values.only);
const dir = mkdtempSync(join(tmpdir(), 'spillway-grpc-callgrind-'));

async function count(kind) {
  const prefix = kind.replace(/\W+/g, '_');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, `${prefix}.%p`)}`,
      process.execPath,
      '--single-threaded',
      '--min-semi-space-size=16',
      '--max-semi-space-size=16',
      new URL('../lib/grpc-servers.js', import.meta.url).pathname,
      kind,
      values.dist,
    ],
    { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] },
  );
  const { port, hold } = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
    child.on('message', (m) => m.port !== undefined && resolve(m));
  });
  const holder = hold ? await holdOneCall(child, port) : undefined;
  const load = grpcLoad(port, { concurrency, channels: 1 });
  await load.ready;
  await load.calls(warmup);
  execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
  await load.calls(calls);
  execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
  load.close();
  holder?.destroy();
  child.removeAllListeners('exit');
  child.kill('SIGKILL');
  const file = readdirSync(dir).find((f) => f.startsWith(`${prefix}.${child.pid}.`));
  const summary = /^summary: (\d+)$/m.exec(readFileSync(join(dir, file), 'utf8'));
  const statuses = [...load.counts.entries()].map(([c, n]) => `${statusName(c)}×${n}`).join(' ');
  return { perCall: Number(summary[1]) / calls, statuses };
}

const results = new Map();
const queue = [...cases];
let finished = 0;
async function worker() {
  for (let kind = queue.shift(); kind !== undefined; kind = queue.shift()) {
    results.set(kind, await count(kind));
    process.stderr.write(`\r${++finished}/${cases.length} counted (${kind})`.padEnd(70));
  }
}
await Promise.all([worker(), worker()]);
process.stderr.write('\n');
if (process.env.KEEP_CALLGRIND === undefined) rmSync(dir, { recursive: true, force: true });
else process.stderr.write(`callgrind files kept in ${dir}\n`);

const base = results.get(grpcBase).perCall;
const rows = cases.map((kind) => ({
  kind,
  instructionsPerCall: Math.round(results.get(kind).perCall),
  ratio: results.get(kind).perCall / base,
  statuses: results.get(kind).statuses,
}));
if (values.json) {
  console.log(
    JSON.stringify(
      { node: process.version, dist: values.dist, calls, warmup, concurrency, rows },
      null,
      2,
    ),
  );
} else {
  console.log(
    `Node ${process.version}; build ${values.dist}; user-space instructions per call, ${warmup} warm-up and ${calls} counted calls per server, ${concurrency} in flight over one HTTP/2 session.\n`,
  );
  console.log(`| server | instructions per call | × ${grpcBase} | statuses (all calls) |`);
  console.log('|---|---:|---:|---|');
  for (const r of rows) {
    console.log(
      `| ${r.kind} | ${r.instructionsPerCall.toLocaleString('en')} | ${r.ratio.toFixed(3)} | ${r.statuses} |`,
    );
  }
}
