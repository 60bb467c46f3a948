#!/usr/bin/env node
// The verdict on the caller-overhead target (BENCHMARKS.md, "Caller overhead"): a default
// dependency.fetch against a bare fetch, and against cockatiel's wrap(bulkhead, circuitBreaker,
// retry) around the same fetch, in CPU time per call, the cases' calls alternating one by one in
// ONE process. A loopback fetch's time on a shared 2-core VM moves far more from one moment to
// the next than the few per cent the target is about (diagnostics/client-rounds.js shows it),
// and diagnostics/client-instructions.js counts exactly but only user space, under valgrind.
// Here each case makes one call in turn (in an order shuffled afresh every round), and each
// call's CPU time — user and system of this process, from process.cpuUsage() — and wall time
// are added to its case. What the
// machine does at one moment (a neighbour, the clock speed) falls on every case alike, and the
// cases share one compiled fetch, so however V8 compiled Node's internals, it did so for all.
// The server (lib/ok-server.js) runs in a child process: its CPU is not counted here. With
// two or more cores, this process is pinned to the first and the server to the second
// (taskset, BENCHMARKS.md rule 6), so neither waits for the other's core.
// Caveats: process.cpuUsage() counts every thread of the process, so V8's background
// compiler and GC threads land in whichever call they run beside (spread over all cases);
// each reading costs a system call, the same in every case.
// Ratios are given of the means, of the medians and of the means without each case's slowest
// 1 % of calls (those few calls carry a scavenge, a major GC or a background compile, and decide
// the plain mean's ratio); the calls are also cut into batches in order, and the trimmed ratio's
// median and range over the batches shows how far it moves.
// One process is not the whole story: how V8 compiled this process's code (and where it put it)
// moves a ratio from one process to the next by more than the batches within one process move. --runs N makes N processes in turn, one after the other, and reports each
// case's trimmed ratio in every run and its median (min–max) over the runs.
// Which cases share the process moved a ratio as well — mostly the fixed order the cases then
// took turns in (below); compare rows of one set, and read a verdict over several sets.
// --block N lets each case make N calls in a row in its turn (each then runs as it would in a
// loop of its own), still in one process.
// Why shuffled: a call runs warmer after one that ran the same code. Turning a fixed order by one
// case a round (as this bench first did) keeps every case's predecessor the same, so a case that
// always follows its twin is cheaper: with --control (a second bare case, placed just before the
// bare one in that cycle) every other row read higher than without it. A fresh random
// order each round gives every case every predecessor alike; --order rotate keeps the old cycle.
// Usage: node bench/client-cpu.js --help
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ambientCase, fetchCases } from './lib/client-cases.js';
import { seededRandom } from '../dist/load/arrivals.js';
import { startOkServer } from './lib/ok-server.js';
import { pinApart } from './lib/pinning.js';
import { mean, median, shuffle, trimmedMean as trimmedBy } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '40000' },
    warmup: { type: 'string', default: '4000' },
    batches: { type: 'string', default: '10' },
    only: { type: 'string' },
    // A second bare case, the same call made by another closure: its ratio (1 in truth) shows
    // how far this method errs by itself.
    control: { type: 'boolean', default: false },
    // Another build of Spillway to measure (e.g. a copy of dist/ made before a change).
    dist: { type: 'string' },
    // Another build whose default dependency.fetch runs beside this one's, in the same process:
    // an A/B of a change under the very same conditions.
    against: { type: 'string' },
    help: { type: 'boolean', default: false },
    // Calls each case makes in a row before the next case's turn: 1 alternates call by call.
    block: { type: 'string', default: '1' },
    order: { type: 'string', default: 'shuffle' },
    seed: { type: 'string', default: '1' },
    runs: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(`Usage: node bench/client-cpu.js [options]

dependency.fetch over a bare fetch (and cockatiel's policies around the same fetch) in CPU time
per call, against a loopback keep-alive server in another process; the cases alternate call by
call in one process (see the comment at the top of this file for why, and BENCHMARKS.md for
results).

  --calls N      counted calls of every case (default 40000)
  --warmup N     calls of every case made first and not counted (default 4000)
  --batches N    batches the counted calls are cut into, for the batch spread (default 10)
  --only a,b     only the cases whose names contain one of these (the bare case always runs)
  --control      a second bare case: how far the method errs by itself (its ratio is 1 in truth)
  --block N      calls each case makes in a row in its turn (default 1)
  --order O      shuffle: a fresh random order every round (default); rotate: a fixed cycle
                 turned by one case a round (each case then always follows the same one)
  --seed N       seed of the shuffle, so a run can be repeated (default 1)
  --runs N       N processes in turn; each case's ratio per run and median (min–max) over runs
  --dist DIR     measure another build of Spillway (e.g. a copy of dist/ made before a change)
  --against D,E  add the default dependency.fetch of other builds, in the same process (A/B)
  --json         machine-readable output`);
  process.exit(0);
}
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 100) {
  throw new Error(`--runs must be an integer from 1 to 100, not ${values.runs}`);
}
if (runs > 1) {
  await severalRuns(runs);
  process.exit(0);
}
const calls = Number(values.calls);
const warmup = Number(values.warmup);
const batches = Number(values.batches);
const block = Number(values.block);
if (values.order !== 'shuffle' && values.order !== 'rotate') {
  throw new Error(`--order must be shuffle or rotate, not ${values.order}`);
}
const random = seededRandom(Number(values.seed));
if (!Number.isInteger(block) || block < 1 || block > 10_000) {
  throw new Error(`--block must be an integer from 1 to 10000, not ${values.block}`);
}
if (!Number.isInteger(calls) || !Number.isInteger(warmup) || !Number.isInteger(batches)) {
  throw new Error('--calls, --warmup and --batches must be integers');
}
if (calls < batches || batches < 1 || warmup < 0) {
  throw new Error(`--calls (${calls}) must be at least --batches (${batches}), which is ≥ 1`);
}

const client =
  values.dist === undefined
    ? '../dist/client/index.js'
    : pathToFileURL(join(values.dist, 'client/index.js')).href;
const all = fetchCases({
  loadDependency: async () => (await import(client)).dependency,
  loadRunInContext: async () => (await import(client)).runInContext,
  deadlineMs: 5_000,
});
const bareCase = 'bare fetch(url)';
// The share of each case's slowest calls the trimmed mean leaves out.
const trimShare = 0.01;
const wanted = values.only?.split(',');
const controlCase = 'control: bare fetch(url) again';
if (values.control) all[controlCase] = all[bareCase];
const defaultsCase = 'dependency({ name, baseUrl }).fetch(path), defaults';
for (const dir of values.against?.split(',') ?? []) {
  const other = pathToFileURL(join(dir, 'client/index.js')).href;
  const cases = fetchCases({
    loadDependency: async () => (await import(other)).dependency,
    deadlineMs: 5_000,
  });
  all[`${defaultsCase}, build ${dir}`] = cases[defaultsCase];
}
// The ambient case runs only when named (see client-cases.js).
const names = Object.keys(all).filter(
  (name) =>
    (name !== ambientCase || wanted?.some((w) => name.includes(w)) === true) &&
    (wanted === undefined ||
      name === bareCase ||
      name === controlCase ||
      name.includes(', build ') ||
      wanted.some((w) => name.includes(w))),
);

const { url, child: server } = await startOkServer();
const pinned = pinApart(server.pid);
try {
  const made = [];
  for (const name of names) made.push(await all[name](url));

  const n = names.length;
  // Per case, every counted call's CPU and wall microseconds, in the order they were made.
  const cpu = names.map(() => new Float64Array(calls));
  const wall = names.map(() => new Float64Array(calls));
  const total = warmup + calls;
  const started = performance.now();
  // Each round, every case makes `block` calls in a row, in a fresh random order (or, with
  // --order rotate, in the same cycle turned by one case a round).
  const order = names.map((_, c) => c);
  for (let i = 0, round = 0; i < total; i += block, round++) {
    const end = Math.min(total, i + block);
    if (values.order === 'shuffle') shuffle(order, random);
    for (let k = 0; k < n; k++) {
      const c = values.order === 'shuffle' ? order[k] : (round + k) % n;
      const call = made[c];
      for (let j = i; j < end; j++) {
        const w0 = performance.now();
        const c0 = process.cpuUsage();
        await call();
        const c1 = process.cpuUsage(c0);
        const w1 = performance.now();
        if (j >= warmup) {
          cpu[c][j - warmup] = c1.user + c1.system;
          wall[c][j - warmup] = (w1 - w0) * 1000;
        }
      }
    }
    if (Math.floor(end / 1000) > Math.floor(i / 1000) && !values.json) {
      const seconds = (performance.now() - started) / 1000;
      process.stderr.write(
        `\r${end}/${total} calls of each case (${warmup} warm-up), ${seconds.toFixed(0)} s`.padEnd(
          60,
        ),
      );
    }
  }
  if (!values.json) process.stderr.write('\n');

  const perBatch = Math.ceil(calls / batches);
  const batchesOf = (xs) =>
    Array.from({ length: batches }, (_, b) => xs.subarray(b * perBatch, (b + 1) * perBatch));
  const bare = names.indexOf(bareCase);
  const rows = names.map((name, c) => {
    const ratio = (stat, xs) => stat(xs[c]) / stat(xs[bare]);
    const cpuBatches = batchesOf(cpu[c]);
    const bareBatches = batchesOf(cpu[bare]);
    const batchRatios = cpuBatches.map((xs, b) => trimmedMean(xs) / trimmedMean(bareBatches[b]));
    return {
      name,
      cpuMicrosPerCall: mean(cpu[c]),
      cpuMedianMicros: median(cpu[c]),
      cpuRatio: ratio(mean, cpu),
      cpuRatioMedian: ratio(median, cpu),
      cpuRatioTrimmed: ratio(trimmedMean, cpu),
      cpuRatioBatchMedian: median(batchRatios),
      cpuRatioBatchMin: Math.min(...batchRatios),
      cpuRatioBatchMax: Math.max(...batchRatios),
      wallMicrosPerCall: mean(wall[c]),
      wallRatio: ratio(mean, wall),
      wallRatioTrimmed: ratio(trimmedMean, wall),
    };
  });
  if (values.json) {
    const meta = {
      node: process.version,
      dist: values.dist ?? 'dist',
      calls,
      warmup,
      block,
      order: values.order,
      seed: Number(values.seed),
      batches,
      trimShare,
      pinned,
    };
    console.log(JSON.stringify({ ...meta, rows }, null, 2));
  } else {
    console.log(
      `Node ${process.version}; ${warmup} warm-up calls, then ${calls} calls of every case, ${turn(block, values.order)}; CPU = user + system time of this process per call (the server is another process); trimmed: the mean without each case's slowest ${trimShare * 100} % of calls; batches of ${perBatch} calls; ${pinned ? 'this process on core 0, the server on core 1' : 'not pinned'}.${values.dist === undefined ? '' : ` Build: ${values.dist}.`}\n`,
    );
    console.log(
      '| case | CPU µs/call: mean | median | × bare: mean | median | trimmed | trimmed, batches: median (min–max) | wall × bare: mean | trimmed |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    const f = (x) => x.toFixed(3);
    for (const r of rows) {
      console.log(
        `| ${r.name} | ${r.cpuMicrosPerCall.toFixed(1)} | ${r.cpuMedianMicros.toFixed(0)} | ${f(r.cpuRatio)} | ${f(r.cpuRatioMedian)} | ${f(r.cpuRatioTrimmed)} | ${f(r.cpuRatioBatchMedian)} (${f(r.cpuRatioBatchMin)}–${f(r.cpuRatioBatchMax)}) | ${f(r.wallRatio)} | ${f(r.wallRatioTrimmed)} |`,
      );
    }
  }
} finally {
  server.kill();
}

/**
 * Makes `count` processes of this benchmark, one after the other, each with the same options and
 * --json, and reports every case's trimmed CPU ratio per run and over the runs.
 */
async function severalRuns(count) {
  // The same options minus --runs (as `--runs N` or `--runs=N`).
  const args = process.argv
    .slice(2)
    .filter((a, i, all) => a !== '--runs' && all[i - 1] !== '--runs' && !a.startsWith('--runs='));
  const results = [];
  for (let r = 0; r < count; r++) {
    if (!values.json) process.stderr.write(`run ${r + 1}/${count}…\n`);
    const out = execFileSync(process.execPath, [process.argv[1], ...args, '--json'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 16 * 1024 * 1024,
    });
    results.push(JSON.parse(String(out)));
  }
  const caseNames = results[0].rows.map((row) => row.name);
  const summary = caseNames.map((name) => {
    const ratios = results.map((run) => run.rows.find((row) => row.name === name).cpuRatioTrimmed);
    const sorted = [...ratios].sort((a, b) => a - b);
    return {
      name,
      cpuRatioTrimmed: ratios,
      median: median(sorted),
      min: sorted[0],
      max: sorted.at(-1),
    };
  });
  if (values.json) {
    console.log(JSON.stringify({ node: process.version, runs: count, summary, results }, null, 2));
    return;
  }
  const first = results[0];
  console.log(
    `Node ${process.version}; ${count} processes in turn, each: ${first.warmup} warm-up calls, then ${first.calls} calls of every case, ${turn(first.block, first.order)}; CPU × bare = the trimmed mean's ratio (slowest ${first.trimShare * 100} % of each case's calls left out); ${first.pinned ? 'pinned: client on core 0, server on core 1' : 'not pinned'}.${values.dist === undefined ? '' : ` Build: ${values.dist}.`}\n`,
  );
  const runColumns = results.map((_, r) => `run ${r + 1}`);
  console.log(`| case | CPU × bare, trimmed: median (min–max) | ${runColumns.join(' | ')} |`);
  console.log(`|---|---:|${runColumns.map(() => '---:|').join('')}`);
  const f = (x) => x.toFixed(3);
  for (const s of summary) {
    console.log(
      `| ${s.name} | ${f(s.median)} (${f(s.min)}–${f(s.max)}) | ${s.cpuRatioTrimmed.map(f).join(' | ')} |`,
    );
  }
}

/** How the cases take turns, in words. */
function turn(b, order) {
  const each = b === 1 ? 'one call of each case' : `${b} calls of each case in a row`;
  return order === 'rotate'
    ? `${each} per round, in one cycle turned by one case a round`
    : `${each} per round, in a fresh random order every round`;
}

/**
 * The mean without the slowest calls: a scavenge, a major GC or a compile on a background thread
 * falls on one call in thousands and costs as much as hundreds of calls; left in, a handful of
 * them decide a ratio of a few per cent.
 */
function trimmedMean(xs) {
  return trimmedBy(xs, trimShare);
}
