#!/usr/bin/env node
// BENCHMARKS.md S7: the Redis store side by side with rate-limiter-flexible's RateLimiterRedis
// in one run, on a Redis on loopback. Reports decisions per second from one process and from
// three (64 calls in flight each), the ratio to RateLimiterRedis round by round, the latency
// of a decision at half that rate (open loop) and one at a time, the concurrency lease
// (acquire + release) beside redis-semaphore the same way, overshoot across 3 replicas offered
// 3x a quota, and the Redis calls the deny cache saves under a greedy client. Peers are
// interleaved round by round (after a warm-up round) so machine noise hits them alike.
//
// Usage: npm run build && node bench/redis.js --help
// Needs a Redis on 127.0.0.1:<port> (keys go under spillway-bench:* and are deleted).
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { deleteKeys, leaseContenders, leaseCycle } from './lib/redis-leases.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    port: { type: 'string', default: '6379' },
    json: { type: 'boolean', default: false },
    dist: { type: 'string', default: fileURLToPath(new URL('../dist', import.meta.url)) },
    'max-batch-items': { type: 'string', default: '16' },
    warmup: { type: 'string', default: '10' },
    child: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(`Usage: npm run build && node bench/redis.js [options]

S7: Spillway's Redis store beside rate-limiter-flexible's RateLimiterRedis (quota decisions)
and redis-semaphore (concurrency leases), interleaved round by round, on a Redis on loopback.

  --seconds S   length of one closed-loop cell (default 2); the open-loop cells run as long
  --rounds N    rounds after a warm-up round (default 3)
  --port P      the Redis on 127.0.0.1 to use (default 6379; keys under spillway-bench:*,
                deleted at the end)
  --dist DIR    load Spillway from this build instead of dist/
  --max-batch-items N
                the store's maxBatchItems (default 16)
  --warmup S    seconds each open-loop cell's loop runs before it is measured (default 10;
                at least 1 + --seconds): a fresh process runs its code below V8's top tier
                for a while, and on Node 24 and 25 ioredis's commands then cost long
                scavenges (docs/redis.md). Its seconds 1 to 1 + --seconds are measured too,
                reported apart as the first seconds' p99
  --json        machine-readable output

The open-loop cells (half of RateLimiterRedis's rate) each run in a fresh process, with a PING
at the same rate as the floor the machine allows, and that process's event-loop delay p99.`);
  process.exit(0);
}
const redisModule = await import(pathToFileURL(resolve(values.dist, 'redis/index.js')).href);
const { redisStore } = redisModule;
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const port = Number(values.port);
const maxBatchItems = Number(values['max-batch-items']);
const warmupSeconds = Number(values.warmup);
if (!(warmupSeconds >= 1 + seconds)) {
  console.error(`--warmup must be at least 1 + --seconds (${1 + seconds}), got ${values.warmup}`);
  process.exit(2);
}
const ids = Array.from({ length: 10_000 }, (_, i) => `client-${i}`);
const randomKey = (i) => ids[(i * 7919) % ids.length];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function ioredis() {
  const c = new Redis({
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  c.on('error', () => {});
  await c.connect();
  return { client: c, close: () => c.disconnect() };
}

async function nodeRedis() {
  const c = createClient({ socket: { port }, disableOfflineQueue: true });
  c.on('error', () => {});
  await c.connect();
  return { client: c, close: () => c.destroy() };
}

/**
 * Builds a decision function for a contender: `(key) => Promise<{ ok, resetMs }>`, where
 * `resetMs` is, for window limiters, the time until the current window ends.
 */
async function contender(name, prefix, policy) {
  if (name === 'ping') {
    const { client, close } = await ioredis();
    return { decide: () => client.ping(), close };
  }
  if (name === 'rlf-ioredis') {
    const { client, close } = await ioredis();
    const rl = new RateLimiterRedis({
      storeClient: client,
      keyPrefix: `${prefix}:rlf`,
      points: policy.burst,
      duration: Math.max(1, Math.round(policy.burst / policy.ratePerSec)),
    });
    const decide = (key) =>
      rl.consume(key).then(
        (res) => ({ ok: true, resetMs: res.msBeforeNext }),
        (e) => {
          if (e instanceof Error) throw e;
          return { ok: false, resetMs: e.msBeforeNext };
        },
      );
    return { decide, close };
  }
  const { client, close } = name.includes('node-redis') ? await nodeRedis() : await ioredis();
  const store = redisStore({
    client,
    prefix,
    onError: 'closed',
    timeoutMs: 1_000,
    algorithm: name.includes('fixed') ? 'fixed-window' : 'gcra',
    denyCacheMaxKeys: name.includes('nodeny') ? 0 : 10_000,
    maxBatchItems,
  });
  const decide = (key) => store.take(key, 1, policy);
  return { decide, close, store };
}

/** A lease contender (see lib/redis-leases.js) on a client of its own. */
async function leaseContender(name, prefix) {
  const { client, close } = await ioredis();
  return { decide: leaseCycle(name, { client, prefix, redis: redisModule, maxBatchItems }), close };
}

/**
 * Open loop: `perSec` decisions spread evenly over `ms`; latency of each from its start. The
 * driver keeps nothing per decision but its latency, in an array sized up front: holding every
 * decision's promise until the end (as it once did) kept tens of thousands of objects alive, and
 * the scavenges copying them paused this process for 5-9 ms, which the p99 then measured.
 */
async function openLoop(decide, { perSec, ms, keyOf }) {
  const lat = new Float64Array(Math.ceil((perSec * ms) / 1000) + 1);
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  let done = 0;
  let outstanding = 0;
  let allDone = () => {};
  const t0 = performance.now();
  let issued = 0;
  const record = (t) => () => {
    lat[done++] = performance.now() - t;
    if (--outstanding === 0) allDone();
  };
  while (performance.now() - t0 < ms) {
    const due = Math.min(lat.length, Math.floor(((performance.now() - t0) * perSec) / 1000));
    for (; issued < due; issued++) {
      outstanding++;
      decide(keyOf(issued)).then(record(performance.now()));
    }
    await sleep(1);
  }
  if (outstanding > 0) await new Promise((resolve) => (allDone = resolve));
  loopDelay.disable();
  const sorted = lat.subarray(0, done).sort();
  const q = (p) => sorted[Math.min(done - 1, Math.floor(p * done))] ?? NaN;
  const loopP99 = loopDelay.percentile(99) / 1e6;
  return { perSec: (done * 1000) / ms, p50: q(0.5), p99: q(0.99), loopP99 };
}

/** Closed loop with `inFlight` concurrent callers for `ms`; latency per call in ms. */
async function hammer(decide, { inFlight, ms, keyOf }) {
  const lat = [];
  let admitted = 0;
  const stopAt = performance.now() + ms;
  let i = 0;
  const worker = async () => {
    while (performance.now() < stopAt) {
      const t = performance.now();
      if ((await decide(keyOf(i++))).ok) admitted++;
      lat.push(performance.now() - t);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  return { perSec: lat.length / elapsed, p50: q(0.5), p99: q(0.99), admitted, calls: lat.length };
}

async function cleanup(prefix) {
  const { client, close } = await ioredis();
  await deleteKeys(client, prefix);
  close();
}

// ---- child mode: one replica of the 3-process runs, or one open-loop cell ---------------
if (values.child !== undefined) {
  const cfg = JSON.parse(values.child);
  const { decide, close, store } = await contender(cfg.name, cfg.prefix, cfg.policy);
  if (cfg.open !== undefined) {
    // Warm up (JIT, script cache) in a process nothing ran in before: closed loop, then the
    // same open loop for cfg.warmupMs, discarded but for its seconds 1 to 1 + --seconds (the
    // first seconds, reported apart). Measured from its first second, an open loop read ~0.5
    // ms more p99 on Node 20 (V8 compiling for the open loop's shape, which the closed loop
    // does not reach); on Node 24 ioredis's path runs at Maglev, not TurboFan, for ~10,000
    // commands, and the p99 reads 10-14 ms until then (docs/redis.md).
    await hammer(decide, { inFlight: 16, ms: 500, keyOf: randomKey });
    await openLoop(decide, { ...cfg.open, ms: 1_000, keyOf: randomKey });
    const first = await openLoop(decide, { ...cfg.open, keyOf: randomKey });
    const rest = cfg.warmupMs - 1_000 - cfg.open.ms;
    if (rest > 0) await openLoop(decide, { ...cfg.open, ms: rest, keyOf: randomKey });
    const steady = await openLoop(decide, { ...cfg.open, keyOf: randomKey });
    process.send({ ...steady, firstP99: first.p99 });
    close();
    process.exit(0);
  }
  await sleep(Math.max(0, cfg.startAt - Date.now()));
  const admittedAt = [];
  const keyOf = cfg.hotKey ? () => 'hot' : (i) => ids[i % ids.length];
  const wrapped = cfg.record
    ? (key) => {
        const sentAt = Date.now();
        return decide(key).then((d) => {
          if (d.ok) admittedAt.push([Date.now(), d.resetMs, sentAt]);
          return d;
        });
      }
    : decide;
  const r = await hammer(wrapped, { inFlight: cfg.inFlight, ms: cfg.ms, keyOf });
  process.send({ ...r, admittedAt, redisCalls: store?.stats().calls });
  close();
  process.exit(0);
}

/** Runs `count` children with `cfg` (see child mode); resolves with what each sent. */
function children(cfg, count) {
  const runs = Array.from(
    { length: count },
    () =>
      new Promise((resolve, reject) => {
        const child = fork(new URL(import.meta.url).pathname, [
          '--child',
          JSON.stringify(cfg),
          '--port',
          String(port),
          '--dist',
          values.dist,
          '--max-batch-items',
          values['max-batch-items'],
        ]);
        child.once('message', resolve);
        child.once('error', reject);
      }),
  );
  return Promise.all(runs);
}

function threeProcesses(cfg) {
  return children({ ...cfg, startAt: Date.now() + 1_000 }, 3);
}

// ---- the report -------------------------------------------------------------------------
const prefix = `spillway-bench:${randomBytes(3).toString('hex')}`;
const report = {
  machine: `${cpus().length} × ${cpus()[0]?.model}`,
  node: process.version,
  seconds,
  loadAverageAtStart: loadavg().map((x) => +x.toFixed(2)),
  maxBatchItems,
  openLoopWarmupSeconds: warmupSeconds,
};
const ms = seconds * 1000;
const wide = { name: 'wide', ratePerSec: 1e6, burst: 1e6 }; // never refuses: pure cost
const contenders = ['spillway-ioredis', 'spillway-node-redis', 'rlf-ioredis'];
const med = (xs, f) => xs.map(f).sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Median and range of `a[i] / b[i]` over rounds. */
const ratios = (a, b) => {
  const rs = a.map((x, i) => x.perSec / b[i].perSec).sort((x, y) => x - y);
  return {
    median: +rs[Math.floor(rs.length / 2)].toFixed(2),
    min: +rs[0].toFixed(2),
    max: +rs.at(-1).toFixed(2),
  };
};

try {
  // 1. One process, 64 in flight; and 2. one call at a time (added latency on loopback).
  const built = {};
  for (const name of contenders) built[name] = await contender(name, `${prefix}:${name}`, wide);
  for (const name of leaseContenders) {
    built[name] = await leaseContender(name, `${prefix}:${name}`);
  }
  const tput = Object.fromEntries([...contenders, ...leaseContenders].map((n) => [n, []]));
  const seq = Object.fromEntries(contenders.map((n) => [n, []]));
  // Round 0 warms up (JIT, connections, script cache) and is not counted.
  for (let r = 0; r <= rounds; r++) {
    const order = r % 2 === 0 ? contenders : [...contenders].reverse();
    for (const name of order) {
      const t = await hammer(built[name].decide, { inFlight: 64, ms: ms / 2, keyOf: randomKey });
      const s = await hammer(built[name].decide, { inFlight: 1, ms: ms / 4, keyOf: randomKey });
      if (r > 0) {
        tput[name].push(t);
        seq[name].push(s);
      }
    }
    const leaseOrder = r % 2 === 0 ? leaseContenders : [...leaseContenders].reverse();
    for (const name of leaseOrder) {
      const t = await hammer(built[name].decide, { inFlight: 64, ms: ms / 2, keyOf: randomKey });
      if (r > 0) tput[name].push(t);
    }
  }
  // Half of RateLimiterRedis's rate, offered open loop to each, interleaved, each cell in a
  // fresh process: the closed-loop cells leave this one's heap full of garbage whose
  // collection paused whichever contender ran next. PING at the same rate is the floor.
  const halfRate = Math.round(med(tput['rlf-ioredis'], (x) => x.perSec) / 2);
  const atHalf = { 'spillway-ioredis': [], 'spillway-node-redis': [], 'rlf-ioredis': [], ping: [] };
  for (let r = 0; r < rounds; r++) {
    const names = Object.keys(atHalf);
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length];
      const [cell] = await children(
        {
          name,
          prefix: `${prefix}:half:${name}`,
          policy: wide,
          open: { perSec: halfRate, ms },
          warmupMs: warmupSeconds * 1000,
        },
        1,
      );
      atHalf[name].push(cell);
    }
  }
  for (const name of [...contenders, ...leaseContenders]) built[name].close();
  report.ratioToRateLimiterRedis = {
    'spillway-ioredis': ratios(tput['spillway-ioredis'], tput['rlf-ioredis']),
    'spillway-node-redis': ratios(tput['spillway-node-redis'], tput['rlf-ioredis']),
  };
  report.atHalfRate = Object.entries(atHalf).map(([n, xs]) => ({
    contender: n,
    offeredPerSec: halfRate,
    achievedPerSec: Math.round(med(xs, (x) => x.perSec)),
    p50Ms: +med(xs, (x) => x.p50).toFixed(3),
    p99Ms: +med(xs, (x) => x.p99).toFixed(3),
    worstP99Ms: +Math.max(...xs.map((x) => x.p99)).toFixed(3),
    p99MsByRound: xs.map((x) => +x.p99.toFixed(3)),
    firstSecondsP99Ms: +med(xs, (x) => x.firstP99).toFixed(3),
    eventLoopP99Ms: +med(xs, (x) => x.loopP99).toFixed(2),
  }));
  report.leases = leaseContenders.map((n) => ({
    contender: n,
    cyclesPerSec: Math.round(med(tput[n], (x) => x.perSec)),
    p50Ms: +med(tput[n], (x) => x.p50).toFixed(3),
    p99Ms: +med(tput[n], (x) => x.p99).toFixed(3),
  }));
  report.leaseRatio = ratios(tput['spillway-lease'], tput['redis-semaphore']);
  report.oneProcess = contenders.map((n) => ({
    contender: n,
    decisionsPerSec: Math.round(med(tput[n], (x) => x.perSec)),
    p50Ms: +med(tput[n], (x) => x.p50).toFixed(3),
    p99Ms: +med(tput[n], (x) => x.p99).toFixed(3),
  }));
  report.addedLatencyOneAtATime = contenders.map((n) => ({
    contender: n,
    p50Ms: +med(seq[n], (x) => x.p50).toFixed(3),
    p99Ms: +med(seq[n], (x) => x.p99).toFixed(3),
  }));

  // 3. Three processes, 64 in flight each.
  report.threeProcesses = [];
  for (const name of ['spillway-ioredis', 'rlf-ioredis']) {
    const rs = await threeProcesses({
      name,
      prefix: `${prefix}:3p:${name}`,
      policy: wide,
      inFlight: 64,
      ms,
    });
    report.threeProcesses.push({
      contender: name,
      decisionsPerSec: Math.round(rs.reduce((s, r) => s + r.perSec, 0)),
    });
  }

  // 4. Overshoot across 3 replicas hammering one key (far more than 3x the quota).
  //    Windows (Spillway's fixed window, RLF's window from the first request): admissions
  //    are grouped by the window end each answer reported; overshoot = worst window over N.
  //    GCRA: admitted against burst + rate × span.
  report.overshoot = [];
  for (const [name, policy, windowed] of [
    ['spillway-ioredis-fixed', { name: 'fw', ratePerSec: 200, burst: 200 }, true],
    ['spillway-ioredis', { name: 'gcra', ratePerSec: 200, burst: 20 }, false],
    ['rlf-ioredis', { name: 'rlf', ratePerSec: 200, burst: 200 }, true],
  ]) {
    const rs = await threeProcesses({
      name,
      prefix: `${prefix}:os:${name}`,
      policy,
      inFlight: 16,
      ms,
      hotKey: true,
      record: true,
    });
    const seen = rs.flatMap((r) => r.admittedAt);
    let allowed;
    if (windowed) {
      // Reported window ends of one window differ only by latency; windows are a full
      // window length apart: cluster the sorted ends.
      const windowMs = (policy.burst / policy.ratePerSec) * 1000;
      const ends = seen.map(([t, resetMs]) => t + resetMs).sort((a, b) => a - b);
      const counts = [];
      let start = -Infinity;
      for (const e of ends) {
        if (e - start > windowMs / 2) {
          counts.push(0);
          start = e;
        }
        counts[counts.length - 1]++;
      }
      allowed = policy.burst * counts.length;
      const worst = Math.max(...counts);
      report.overshoot.push({
        contender: name,
        admitted: seen.length,
        allowed,
        worstWindow: worst,
        overshootPct: +Math.max(0, ((worst - policy.burst) / policy.burst) * 100).toFixed(2),
      });
    } else {
      // Redis admitted each between its send and its receive: the span is at most from the
      // first send to the last receive.
      const firstSent = Math.min(...seen.map(([, , sentAt]) => sentAt));
      const lastRecv = Math.max(...seen.map(([t]) => t));
      allowed = Math.floor(policy.burst + (policy.ratePerSec * (lastRecv - firstSent)) / 1000);
      report.overshoot.push({
        contender: name,
        admitted: seen.length,
        allowed,
        worstWindow: '-',
        overshootPct: +Math.max(0, ((seen.length - allowed) / allowed) * 100).toFixed(2),
      });
    }
  }

  // 5. Deny cache under a greedy client: one key at 100/s hammered with 64 in flight.
  report.denyCache = [];
  for (const name of ['spillway-ioredis', 'spillway-ioredis-nodeny']) {
    const c = await contender(name, `${prefix}:deny:${name}`, {});
    const greedy = { name: 'greedy', ratePerSec: 100, burst: 10 };
    const r = await hammer((k) => c.store.take(k, 1, greedy), {
      inFlight: 64,
      ms,
      keyOf: () => 'greedy',
    });
    report.denyCache.push({
      contender: name,
      decisions: r.calls,
      redisCalls: c.store.stats().calls,
      admitted: r.admitted,
      decisionsPerSec: Math.round(r.perSec),
    });
    c.close();
  }
} finally {
  await cleanup(prefix);
}

if (values.json) {
  console.log(JSON.stringify(report, null, 2));
} else {
  console.log(
    `Redis store benchmark (S7) — ${report.machine}, Node ${report.node}, ${seconds} s per cell, ` +
      `maxBatchItems ${maxBatchItems}, open-loop warm-up ${warmupSeconds} s`,
  );
  const show = (title, rows) => {
    console.log(`\n${title}`);
    console.table(rows);
  };
  console.log(`load average at start: ${report.loadAverageAtStart.join(', ')}`);
  show('One process, 64 in flight (median of rounds)', report.oneProcess);
  show(
    'Decisions/s over RateLimiterRedis, per round (median, min, max)',
    report.ratioToRateLimiterRedis,
  );
  show(
    "Open loop at half of RateLimiterRedis's rate, a fresh process per cell (ping: the floor),\n" +
      `measured after ${warmupSeconds} s of it; firstSecondsP99Ms: its seconds 1 to ${1 + seconds}`,
    report.atHalfRate,
  );
  show('Concurrency lease, acquire + release, 64 in flight (median of rounds)', report.leases);
  show('Lease cycles/s over redis-semaphore, per round', { ratio: report.leaseRatio });
  show('Added latency of one quota check, one at a time', report.addedLatencyOneAtATime);
  show('Three processes, 64 in flight each (sum)', report.threeProcesses);
  show('Overshoot: 3 replicas hammering one key', report.overshoot);
  show('Deny cache: a greedy client on one key (100/s allowed)', report.denyCache);
}
