#!/usr/bin/env node
// The CPU-bound shape (BENCHMARKS.md, "The CPU-bound shape"): every admitted request spins the
// CPU for --service-ms in its handler, so the event loop itself is what saturates and no slot
// count sees it (requests wait in the socket buffers, not in the guard's line). Capacity C is
// measured first (the naive server's answers per second at 1.5 × the nominal 1000/service-ms);
// then each server is offered k × C, open loop, callers giving up after 1 s, and G(k) = goodput
// ÷ min(k, 1) × C. Servers: bench/lib/cpu-shape-server.js, each in its own process on CPU 0;
// the load generator (spillway/load) in this process on CPU 1.
//
// Usage: npm run build && node bench/cpu-shape.js [--k 1.5,10] [--seconds 6] [--service-ms 1]
//          [--only naive,bounded,...] [--json]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { machineLine } from './lib/pinned-servers.js';
import { pinSelfToCpu1 } from './lib/pinning.js';
import { benchOptions, usageError } from './lib/usage.js';

const opts = benchOptions(new URL(import.meta.url), {
  k: { type: 'string', default: '1.5,10' },
  seconds: { type: 'string', default: '6' },
  'service-ms': { type: 'string', default: '1' },
  only: { type: 'string' },
  json: { type: 'boolean', default: false },
});
const ks = opts.k.split(',').map(Number);
const seconds = Number(opts.seconds);
const serviceMs = Number(opts['service-ms']);
if (ks.some((k) => !(k > 0))) usageError(`--k: positive multiples of capacity, got ${opts.k}`);
if (!(seconds >= 1)) usageError(`--seconds must be ≥ 1, got ${opts.seconds}`);
if (!(serviceMs > 0 && serviceMs <= 100)) {
  usageError(`--service-ms must be in (0, 100], got ${opts['service-ms']}`);
}
const variants = ['naive', 'bounded', 'bounded-no-loop', 'bounded-shed-all'];
const chosen = opts.only ? opts.only.split(',') : variants;
for (const v of chosen) {
  if (!variants.includes(v)) usageError(`--only: no server '${v}'; one of ${variants.join(', ')}`);
}

const { runLoad } = await import(new URL('../dist/load/index.js', import.meta.url).href);
const pinned = pinSelfToCpu1();

async function start(variant) {
  const script = new URL('./lib/cpu-shape-server.js', import.meta.url).pathname;
  const args = [process.execPath, script, variant, String(serviceMs)];
  const child = pinned
    ? spawn('taskset', ['-c', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  for await (const line of createInterface({ input: child.stdout })) {
    const m = /listening on (\d+)/.exec(line);
    if (m) return { child, port: Number(m[1]) };
  }
  throw new Error(`${variant} did not start`);
}

/** One open-loop run of `rate`/s against a fresh `variant` server. */
async function offer(variant, rate) {
  const { child, port } = await start(variant);
  try {
    return await runLoad({
      url: `http://127.0.0.1:${port}/`,
      ratePerSec: rate,
      durationMs: seconds * 1000,
      warmupMs: 2000,
      deadlineMs: 1000,
    });
  } finally {
    child.kill();
  }
}

const log = (line) => process.stderr.write(`${line}\n`);
const calibration = await offer('naive', (1.5 * 1000) / serviceMs);
const capacity = calibration.totals.ok / seconds;
log(`capacity C = ${capacity.toFixed(0)}/s (naive at ${(1.5 * 1000) / serviceMs}/s)`);

const rows = [];
for (const k of ks) {
  for (const variant of chosen) {
    log(`${variant} at ${k} × C …`);
    const r = await offer(variant, Math.round(k * capacity));
    const t = r.totals;
    rows.push({
      server: variant,
      k,
      g: t.goodputPerSec / (Math.min(k, 1) * capacity),
      ok: t.ok,
      rejected: t.rejected,
      timeout: t.timeout,
      dropped: t.dropped,
      okP99Ms: t.latencyMs.ok?.p99 ?? null,
      rejectedP99Ms: t.latencyMs.rejected?.p99 ?? null,
      valid: r.validity.valid,
      invalidBecause: r.validity.reasons,
    });
  }
}

const machine = machineLine(pinned);
if (opts.json) {
  console.log(JSON.stringify({ machine, serviceMs, seconds, capacity, rows }, null, 2));
} else {
  console.log(`${machine}; ${serviceMs} ms of CPU per request, C = ${capacity.toFixed(0)}/s`);
  const ms = (x) => (x === null ? '–' : x.toFixed(1));
  console.log(
    `${'server'.padEnd(22)} ${'k'.padStart(4)} ${'G'.padStart(5)} ${'ok'.padStart(7)} ${'refused'.padStart(8)} ${'timeout'.padStart(8)} ${'dropped'.padStart(8)} ${'ok p99'.padStart(8)} ${'ref p99'.padStart(8)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.server.padEnd(22)} ${String(r.k).padStart(4)} ${r.g.toFixed(2).padStart(5)} ${String(r.ok).padStart(7)} ${String(r.rejected).padStart(8)} ${String(r.timeout).padStart(8)} ${String(r.dropped).padStart(8)} ${ms(r.okP99Ms).padStart(8)} ${ms(r.rejectedP99Ms).padStart(8)}${r.valid ? '' : `  not valid: ${r.invalidBecause.join('; ')}`}`,
    );
  }
}
