#!/usr/bin/env node
// S0 and S1 (BENCHMARKS.md, "S0 and S1: the overload ladder"): the demo's servers — naive,
// the bare cockatiel bulkhead and Spillway's bounded, each `spillway serve` over the simulated
// database of 10 connections × 30 ms, so capacity C is exactly 333.3 req/s — first unloaded
// (S0: Poisson arrivals at 0.1 × C; p50 and p99 of the answers), then offered each rung k × C of
// the ladder open loop from 100 clients giving up after 1 s (S1). Per rung and server: G(k) =
// goodput ÷ (min(k, 1) × C), ok p99 and its ratio to the same server's unloaded p99 (the target:
// ≤ 2 ×), refusal p99 (≤ 5 ms), timeouts and network failures, the connections the kernel's
// listen queue dropped (TcpExt ListenDrops, machine-wide), RSS above the idle server, and the
// server's CPU per answer read from /proc (in 10 ms ticks: a rung's total, not one request's).
// With --new-connection every request opens a connection of its own (S9, connection floods:
// what the kernel drops before the app sees it). A fresh server for every run, warmed up as the
// demo warms its own but for longer (--warmup-seconds at the run's own rate; its idle RSS read
// before that); servers on CPU 0, the load on CPU 1; the servers' order shuffled every rung.
//
// Usage: npm run build && node bench/ladder.js [--k 0.5,1,1.5,2,5,10] [--seconds 5]
//          [--unloaded-seconds 20] [--warmup-seconds 2] [--only naive,bulkhead,bounded]
//          [--new-connection] [--report ladder.html] [--json]
// Long runs: node bench/ladder.js --k 10 --seconds 180 --only bounded (RSS for minutes).
import { ladderReport } from './lib/ladder-report.js';
import { processCpuUs } from './lib/proc-cpu.js';
import { machineLine } from './lib/pinned-servers.js';
import { pinSelfToCpu1 } from './lib/pinning.js';
import { shuffle } from './lib/stats.js';
import { benchOptions, usageError } from './lib/usage.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

const opts = benchOptions(new URL(import.meta.url), {
  k: { type: 'string', default: '0.5,1,1.5,2,5,10' },
  seconds: { type: 'string', default: '5' },
  'unloaded-seconds': { type: 'string', default: '20' },
  'warmup-seconds': { type: 'string', default: '2' },
  only: { type: 'string' },
  'new-connection': { type: 'boolean', default: false },
  report: { type: 'string' },
  json: { type: 'boolean', default: false },
});
const ks = opts.k.split(',').map(Number);
const seconds = Number(opts.seconds);
const unloadedSeconds = Number(opts['unloaded-seconds']);
const warmupMs = Number(opts['warmup-seconds']) * 1000;
if (ks.some((k) => !(k > 0 && k <= 30)))
  usageError(`--k: multiples of capacity in (0, 30], got ${opts.k}`);
if (!(seconds >= 1 && seconds <= 600))
  usageError(`--seconds must be in [1, 600], got ${opts.seconds}`);
if (!(warmupMs >= 0 && warmupMs <= 60_000)) {
  usageError(`--warmup-seconds must be in [0, 60], got ${opts['warmup-seconds']}`);
}
if (!(unloadedSeconds >= 1 && unloadedSeconds <= 600)) {
  usageError(`--unloaded-seconds must be in [1, 600], got ${opts['unloaded-seconds']}`);
}
const allServers = ['naive', 'bulkhead', 'bounded'];
const servers = opts.only ? opts.only.split(',') : allServers;
for (const s of servers) {
  if (!allServers.includes(s))
    usageError(`--only: no server '${s}'; one of ${allServers.join(', ')}`);
}

const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
const { runLoad } = await import(dist('load/index.js'));
const { startServer } = await import(dist('cli/demo/server-process.js'));
const { capacityPerSec: C } = await import(dist('cli/demo/records.js'));
const { gentleWarmUp } = await import(dist('cli/demo/run-scenario.js'));
const { callerDeadlineMs } = await import(dist('cli/demo/scenarios.js'));
const { seededRandom } = await import(dist('load/arrivals.js'));
const random = seededRandom(1);
const pinned = pinSelfToCpu1();
const loadBefore = loadavg();
const log = (line) => process.stderr.write(`${line}\n`);
const connection = opts['new-connection'] ? 'new' : 'keep-alive';

/**
 * What the kernel turned away before a server saw it, machine-wide since boot: connections its
 * listen queue had no room for (TcpExt ListenOverflows) and those dropped for any reason
 * (ListenDrops, which counts the overflows too). Undefined where /proc/net/netstat is missing.
 */
function listenDrops() {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n');
    const names = lines.find((l) => l.startsWith('TcpExt:'))?.split(' ');
    const values = lines.filter((l) => l.startsWith('TcpExt:'))[1]?.split(' ');
    const at = names?.indexOf('ListenDrops') ?? -1;
    return at > 0 && values !== undefined ? Number(values[at]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * After the demo's gentle warm-up, the run's own rate for --warmup-seconds: a fresh process is
 * still tiering its hot paths up half a second into a rush, and the one with more code to
 * compile — Spillway's — pays more for it in a 5 s rung (the demo warms 2 s too).
 */
async function warmUp(url, rate) {
  await runLoad({
    url: `${url}/warmup`,
    durationMs: Math.max(warmupMs, 1),
    groups: [clients('warmup', rate, Math.max(warmupMs, 1))],
  });
}

function clients(name, ratePerSec, durationMs) {
  return {
    name,
    ratePerSec,
    clients: 100,
    headers: { 'x-client-id': `${name}-{client}` },
    deadlineMs: callerDeadlineMs,
    durationMs,
  };
}

/** Until the server's database has nothing in use or waiting (at most 30 s). */
async function untilIdle(server) {
  const t0 = performance.now();
  for (;;) {
    const { db } = await server.stats();
    if (db === undefined || (db.busy === 0 && db.waiting === 0)) return true;
    if (performance.now() - t0 > 30_000) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One run on a fresh `name` server: `rate`/s for `ms`, with its CPU and memory. */
async function measure(name, { rate, ms, arrival = 'constant' }) {
  const server = await startServer([name], 0);
  try {
    await gentleWarmUp(server.url);
    const idle = await server.stats();
    await warmUp(server.url, rate);
    if (!(await untilIdle(server))) log(`  ${name}: still busy 30 s after the warm-up`);
    const cpu0 = processCpuUs(server.pid);
    const drops0 = listenDrops();
    const result = await runLoad({
      url: `${server.url}/work`,
      durationMs: ms,
      connection,
      groups: [{ ...clients('clients', rate, ms), arrival }],
    });
    const cpuUs = processCpuUs(server.pid) - cpu0;
    const drops1 = listenDrops();
    const after = await server.stats();
    const listenDropped = drops0 === undefined || drops1 === undefined ? null : drops1 - drops0;
    return { result, cpuUs, listenDropped, idleRss: idle.rssBytes, peakRss: after.maxRssBytes };
  } finally {
    await server.stop();
  }
}

// S0: each server unloaded.
const unloaded = {};
for (const name of servers) {
  log(`S0 ${name}: ${(0.1 * C).toFixed(0)}/s, Poisson, ${unloadedSeconds} s …`);
  const { result } = await measure(name, {
    rate: 0.1 * C,
    ms: unloadedSeconds * 1000,
    arrival: 'poisson',
  });
  const lat = result.totals.latencyMs.ok;
  unloaded[name] = { p50Ms: lat?.p50 ?? null, p99Ms: lat?.p99 ?? null, ok: result.totals.ok };
}

// S1: the ladder.
const rows = [];
for (const k of ks) {
  for (const name of shuffle([...servers], random)) {
    log(`S1 ${name} at ${k} × C …`);
    const { result, cpuUs, listenDropped, idleRss, peakRss } = await measure(name, {
      rate: k * C,
      ms: seconds * 1000,
    });
    const t = result.totals;
    const answered = t.ok + t.rejected + t.error;
    rows.push({
      server: name,
      k,
      g: t.goodputPerSec / (Math.min(k, 1) * C),
      sent: t.sent,
      ok: t.ok,
      rejected: t.rejected,
      error: t.error,
      timeout: t.timeout,
      network: t.network,
      dropped: t.dropped,
      listenDropped,
      okP99Ms: t.latencyMs.ok?.p99 ?? null,
      okP99OverUnloaded:
        t.latencyMs.ok?.p99 != null && unloaded[name].p99Ms
          ? t.latencyMs.ok.p99 / unloaded[name].p99Ms
          : null,
      rejectedP99Ms: t.latencyMs.rejected?.p99 ?? null,
      rssAboveIdleMB: (peakRss - idleRss) / 2 ** 20,
      cpuUsPerAnswer: answered > 0 ? cpuUs / answered : null,
      cpuUs,
      valid: result.validity.valid,
      invalidBecause: result.validity.reasons,
    });
  }
}
const machine = machineLine(pinned);
// Only the start says whether other work shared the machine: by the end, the run itself has
// kept both cores busy for minutes.
const busy = loadBefore[0] > cpus().length * 0.5;
const run = {
  machine,
  loadBefore,
  busy,
  capacity: C,
  seconds,
  warmupSeconds: warmupMs / 1000,
  connection,
  unloaded,
  rows,
};
if (opts.report !== undefined) {
  writeFileSync(opts.report, ladderReport(run));
  log(`report: ${opts.report}`);
}
if (opts.json) {
  console.log(JSON.stringify(run, null, 2));
} else {
  const ms = (x) => (x == null ? '–' : x.toFixed(1));
  console.log(
    `${machine}; C = ${C.toFixed(1)}/s (10 × 30 ms), ${seconds} s a rung${busy ? '; the machine was busy when it started' : ''}`,
  );
  console.log('\nS0 unloaded (0.1 × C):');
  for (const name of servers) {
    const u = unloaded[name];
    console.log(
      `  ${name.padEnd(9)} p50 ${ms(u.p50Ms)} ms  p99 ${ms(u.p99Ms)} ms  (${u.ok} answers)`,
    );
  }
  console.log(
    `\nS1${connection === 'new' ? ' and S9 (a new connection per request)' : ''}` +
      ' (kernel: connections the listen queue dropped, machine-wide):',
  );
  const head = [
    'server',
    'k',
    'G',
    'ok',
    'refused',
    'timeout',
    'network',
    'kernel',
    'ok p99',
    '÷ unl.',
    'ref p99',
    'RSS +MB',
    'µs/ans',
  ];
  const widths = [9, 4, 5, 6, 8, 8, 8, 7, 8, 7, 8, 8, 7];
  const line = (cells) =>
    cells
      .map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
      .join(' ');
  console.log(line(head));
  for (const r of [...rows].sort(
    (a, b) => a.k - b.k || servers.indexOf(a.server) - servers.indexOf(b.server),
  )) {
    console.log(
      line([
        r.server,
        r.k,
        r.g.toFixed(3),
        r.ok,
        r.rejected,
        r.timeout,
        r.network,
        r.listenDropped ?? '–',
        ms(r.okP99Ms),
        r.okP99OverUnloaded == null ? '–' : r.okP99OverUnloaded.toFixed(2),
        ms(r.rejectedP99Ms),
        r.rssAboveIdleMB.toFixed(1),
        r.cpuUsPerAnswer == null ? '–' : r.cpuUsPerAnswer.toFixed(0),
      ]) + (r.valid ? '' : `  not valid: ${r.invalidBecause.join('; ')}`),
    );
  }
}
