#!/usr/bin/env node
// Caller CPU per unary gRPC call: a grpc-js client call through `dependencyInterceptor(dependency())`
// against the same call made bare, in CPU time of the calling process per call — the gRPC
// counterpart of client-cpu.js, made the same way but simpler. Every case is its own grpc-js
// client of the 'bare OK' server of lib/grpc-servers.js, which runs in a child process (its CPU
// is not counted here). The cases make one call each in turn, in an order shuffled afresh every
// round, all in this one process: what the machine does at one moment falls on every case alike.
// Each call's CPU time (user + system of this process, process.cpuUsage()) and wall time are
// added to its case. With two or more cores this process is pinned to the first and the server
// to the second (taskset).
// Rows: the bare call; the bare call sending the two fields a default dependency puts in its
// metadata (`spillway-criticality`, `spillway-attempt`); the bare call through a pass-through
// client interceptor (what grpc-js's interceptor machinery costs by itself); the dependency's
// call with its defaults, and with its breaker and throttle off; and the peer client-cpu.js
// measures beside dependency.fetch — cockatiel's wrap(bulkhead, circuitBreaker, retry) around
// the bare call.
// Ratios are of the trimmed means (each case's slowest 1 % of calls left out: a GC or a
// background compile lands on one call in thousands and decides a plain mean), of the medians,
// and per batch (the calls cut into batches in order: the median and range of the batches'
// trimmed ratios show how far it moves within the run).
// Caveat: process.cpuUsage() counts every thread of the process (V8's compiler and GC threads
// land in whichever call they run beside), and each reading is a system call (the same in every
// case).
// Usage: node bench/grpc-client-cpu.js --help
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import {
  InterceptingCall,
  Metadata,
  credentials,
  makeGenericClientConstructor,
} from '@grpc/grpc-js';
import { benchService, fromBuild, requestBytes } from './lib/grpc-service.js';
import { pinApart } from './lib/pinning.js';
import { mean, median, shuffle, trimmedMean } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '2000' },
    batches: { type: 'string', default: '10' },
    only: { type: 'string' },
    seed: { type: 'string', default: '1' },
    dist: { type: 'string', default: 'dist' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(`Usage: node bench/grpc-client-cpu.js [options]

Caller CPU per unary gRPC call: dependencyInterceptor(dependency()) against the bare grpc-js
call (and cockatiel's policies around the same call), the cases alternating call by call in one
process, the server in another (see the comment at the top of this file).

  --calls N      counted calls of every case (default 20000)
  --warmup N     calls of every case made first and not counted (default 2000)
  --batches N    batches the counted calls are cut into, for the batch spread (default 10)
  --only a,b     only the cases whose names contain one of these (the bare case always runs)
  --seed N       seed of the shuffle, so a run can be repeated (default 1)
  --dist DIR     the build to measure, relative to the repository's root (default dist)
  --json         machine-readable output`);
  process.exit(0);
}
const calls = Number(values.calls);
const warmup = Number(values.warmup);
const batches = Number(values.batches);
if (![calls, warmup, batches].every(Number.isInteger) || batches < 1 || warmup < 0) {
  throw new Error('--calls, --warmup and --batches must be integers, --batches ≥ 1');
}
if (calls < batches) throw new Error(`--calls (${calls}) must be at least --batches (${batches})`);

const BenchClient = makeGenericClientConstructor(benchService, 'Bench');
const twoFields = { 'spillway-criticality': 'critical', 'spillway-attempt': '1' };

const clients = [];
/** A client of `address`, closed at the end. */
function newClient(address, interceptors = []) {
  const client = new BenchClient(address, credentials.createInsecure(), { interceptors });
  clients.push(client);
  return client;
}

/** One unary call on `client` as a promise of its reply. */
function unary(client, metadata, options) {
  return new Promise((resolve, reject) =>
    client.call(requestBytes, metadata ?? new Metadata(), options ?? {}, (error, reply) =>
      error === null ? resolve(reply) : reject(error),
    ),
  );
}

/** The cases: each makes its own client of `address` and returns its call. */
const bareCase = 'bare client.call(request)';
const allCases = {
  [bareCase]: (address) => {
    const client = newClient(address);
    return () => unary(client);
  },
  'bare call with the two propagation fields': (address) => {
    const client = newClient(address);
    return () => {
      const metadata = new Metadata();
      for (const [name, value] of Object.entries(twoFields)) metadata.set(name, value);
      return unary(client, metadata);
    };
  },
  'bare call through a pass-through interceptor': (address) => {
    const passThrough = (options, next) => new InterceptingCall(next(options));
    const client = newClient(address, [passThrough]);
    return () => unary(client);
  },
  'dependencyInterceptor(dependency({ name })), defaults': async (address) => {
    const { dependency } = await fromBuild(values.dist, 'client/index.js');
    const { dependencyInterceptor } = await fromBuild(values.dist, 'grpc/index.js');
    const client = newClient(address, [dependencyInterceptor(dependency({ name: 'bench' }))]);
    return () => unary(client);
  },
  'dependencyInterceptor, breaker and throttle off': async (address) => {
    const { dependency } = await fromBuild(values.dist, 'client/index.js');
    const { dependencyInterceptor } = await fromBuild(values.dist, 'grpc/index.js');
    const dep = dependency({ name: 'bench', breaker: false, throttle: false });
    const client = newClient(address, [dependencyInterceptor(dep)]);
    return () => unary(client);
  },
  // cockatiel sized as a default dependency is (as client-cases.js does for fetch).
  'cockatiel wrap(bulkhead, circuitBreaker, retry) around the call': async (address) => {
    const c = await import('cockatiel');
    const policy = c.wrap(
      c.bulkhead(64, 64),
      c.circuitBreaker(c.handleAll, {
        halfOpenAfter: 5_000,
        breaker: new c.ConsecutiveBreaker(5),
      }),
      c.retry(c.handleAll, { maxAttempts: 2, backoff: new c.ExponentialBackoff() }),
    );
    const client = newClient(address);
    return () => policy.execute(() => unary(client));
  },
};
const wanted = values.only?.split(',');
const names = Object.keys(allCases).filter(
  (name) => wanted === undefined || name === bareCase || wanted.some((w) => name.includes(w)),
);

const server = await startServer();
const pinned = pinApart(server.child.pid);
const loadBefore = loadavg();
try {
  const address = `127.0.0.1:${server.port}`;
  const made = [];
  for (const name of names) made.push(await allCases[name](address));
  const cpu = names.map(() => new Float64Array(calls));
  const wall = names.map(() => new Float64Array(calls));
  const total = warmup + calls;
  const { seededRandom } = await fromBuild(values.dist, 'load/arrivals.js');
  const random = seededRandom(Number(values.seed));
  const order = names.map((_, c) => c);
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    shuffle(order, random);
    for (const c of order) {
      const w0 = performance.now();
      const c0 = process.cpuUsage();
      await made[c]();
      const c1 = process.cpuUsage(c0);
      const w1 = performance.now();
      if (i >= warmup) {
        cpu[c][i - warmup] = c1.user + c1.system;
        wall[c][i - warmup] = (w1 - w0) * 1000;
      }
    }
    if ((i + 1) % 1000 === 0 && !values.json) {
      const seconds = ((performance.now() - started) / 1000).toFixed(0);
      process.stderr.write(
        `\r${i + 1}/${total} calls of each case (${warmup} warm-up), ${seconds} s`,
      );
    }
  }
  if (!values.json) process.stderr.write('\n');
  const loadAfter = loadavg();

  const trimmed = (xs) => trimmedMean(xs, 0.01);
  const perBatch = Math.ceil(calls / batches);
  const batchesOf = (xs) =>
    Array.from({ length: batches }, (_, b) => xs.subarray(b * perBatch, (b + 1) * perBatch));
  const bare = names.indexOf(bareCase);
  const rows = names.map((name, c) => {
    const ratio = (stat, xs) => stat(xs[c]) / stat(xs[bare]);
    const own = batchesOf(cpu[c]);
    const base = batchesOf(cpu[bare]);
    const batchRatios = own.map((xs, b) => trimmed(xs) / trimmed(base[b]));
    return {
      name,
      cpuMicrosPerCall: mean(cpu[c]),
      cpuTrimmedMicros: trimmed(cpu[c]),
      cpuRatio: ratio(mean, cpu),
      cpuRatioTrimmed: ratio(trimmed, cpu),
      cpuRatioMedian: ratio(median, cpu),
      cpuRatioBatchMedian: median(batchRatios),
      cpuRatioBatchMin: Math.min(...batchRatios),
      cpuRatioBatchMax: Math.max(...batchRatios),
      wallMicrosPerCall: mean(wall[c]),
      wallRatioTrimmed: ratio(trimmed, wall),
    };
  });
  const fmt = (l) => l.map((x) => x.toFixed(1)).join(' / ');
  const busy = loadBefore[0] > cpus().length * 0.5 || loadAfter[0] > cpus().length * 0.5;
  if (values.json) {
    const meta = { node: process.version, dist: values.dist, calls, warmup, batches, pinned };
    console.log(JSON.stringify({ ...meta, loadBefore, loadAfter, busy, rows }, null, 2));
  } else {
    console.log(
      `Node ${process.version}; build ${values.dist}; ${warmup} warm-up calls, then ${calls} calls of every case, one call of each case per round in a fresh random order; CPU = user + system time of this process per call (the server is another process); trimmed: without each case's slowest 1 % of calls; batches of ${perBatch} calls; ${pinned ? 'this process on core 0, the server on core 1' : 'not pinned'}; load average (1/5/15 min) ${fmt(loadBefore)} before, ${fmt(loadAfter)} after${busy ? ' — BUSY: other work shared the CPUs, read the ratios, not the µs' : ''}.\n`,
    );
    console.log(
      '| case | CPU µs/call: mean | trimmed | × bare: trimmed | median | mean | trimmed, batches: median (min–max) | wall × bare, trimmed |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    const f = (x) => x.toFixed(3);
    for (const r of rows) {
      console.log(
        `| ${r.name} | ${r.cpuMicrosPerCall.toFixed(1)} | ${r.cpuTrimmedMicros.toFixed(1)} | ${f(r.cpuRatioTrimmed)} | ${f(r.cpuRatioMedian)} | ${f(r.cpuRatio)} | ${f(r.cpuRatioBatchMedian)} (${f(r.cpuRatioBatchMin)}–${f(r.cpuRatioBatchMax)}) | ${f(r.wallRatioTrimmed)} |`,
      );
    }
  }
} finally {
  for (const client of clients) client.close();
  server.child.kill();
}

/** The 'bare OK' server of lib/grpc-servers.js in a child process; resolves with it and its port. */
function startServer() {
  const script = new URL('./lib/grpc-servers.js', import.meta.url).pathname;
  const child = spawn(process.execPath, [script, 'bare OK', values.dist], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    child.once('message', (m) => {
      child.removeAllListeners('exit');
      // Its IPC channel would keep this process alive.
      child.disconnect();
      resolve({ child, port: m.port });
    });
  });
}
