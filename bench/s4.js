#!/usr/bin/env node
// S4 (BENCHMARKS.md): a slow dependency behind one route. Two routes on one server — /slow over
// a 10-connection database, /fast answering at once — each offered 200 req/s from 100 clients
// (1 s deadline) for three phases; in the middle phase the database slows 10× (30 → 300 ms).
// Side by side: Spillway with a fixed cap of 10 on /slow, Spillway with an adaptive limit, and
// Fastify with @fastify/under-pressure; a naive server as the floor. Reports the slow route's
// goodput in each phase, the fast route's p99, and for the adaptive limit how long it took to
// adapt and to recover. Servers on CPU 0, load on CPU 1 where taskset exists.
// Usage: npm run build && node bench/s4.js [--phase-s 5] [--rounds 1] [--json]
import { execFileSync, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { runLoad } from '../dist/load/index.js';

const { values } = parseArgs({
  options: {
    'phase-s': { type: 'string', default: '5' },
    rounds: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const phaseMs = Number(values['phase-s']) * 1000;
const rounds = Number(values.rounds);
const variants = ['fixed', 'adaptive', 'under-pressure', 'naive'];
let pinned = false;
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  pinned = true;
} catch {
  // no taskset here: run unpinned
}

function get(url) {
  return new Promise((resolve) => {
    const req = request(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    });
    req.on('error', () => resolve(''));
    req.end();
  });
}

async function start(variant, port) {
  const script = new URL('./lib/s4-server.js', import.meta.url).pathname;
  const args = [process.execPath, script, variant, String(port)];
  const child = pinned
    ? spawn('taskset', ['-c', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  for await (const line of createInterface({ input: child.stdout }))
    if (line.startsWith('listening')) break;
  return child;
}

async function measure(variant, port) {
  const child = await start(variant, port);
  const base = `http://127.0.0.1:${port}`;
  await runLoad({ url: `${base}/fast`, ratePerSec: 200, durationMs: 1000, deadlineMs: 1000 });
  const trace = [];
  const poll = setInterval(async () => {
    const s = JSON.parse((await get(`${base}/stats`)) || '{}');
    if (s.guard?.limit !== undefined) trace.push(s.guard.limit);
  }, 250);
  setTimeout(() => get(`${base}/admin/service-ms?ms=300`), phaseMs);
  setTimeout(() => get(`${base}/admin/service-ms?ms=30`), 2 * phaseMs);
  const client = (name, path) => ({
    name,
    path,
    ratePerSec: 200,
    clients: 100,
    headers: { 'x-client-id': `${name}-{client}` },
    deadlineMs: 1000,
  });
  const r = await runLoad({
    url: `${base}/slow`,
    durationMs: 3 * phaseMs,
    groups: [client('slow', '/slow'), client('fast', '/fast')],
  });
  clearInterval(poll);
  child.kill('SIGKILL');
  const slow = r.groups.find((g) => g.name === 'slow');
  const fast = r.groups.find((g) => g.name === 'fast');
  const phase = (i) => {
    const w = slow.windows.slice((i * phaseMs) / 1000, ((i + 1) * phaseMs) / 1000);
    return w.reduce((t, x) => t + x.good, 0) / w.length;
  };
  // Time to adapt: from the slowdown until the limit first reaches its lowest level ±1;
  // time to recover: from the recovery until it is back within 1 of where it stood before.
  let adaptMs = null;
  let recoverMs = null;
  if (trace.length > 0 && Math.min(...trace) !== Math.max(...trace)) {
    const step = 250;
    const at = (ms) => Math.floor(ms / step);
    const slowPart = trace.slice(at(phaseMs), at(2 * phaseMs));
    const low = Math.min(...slowPart);
    const i = slowPart.findIndex((x) => x <= low + 1);
    adaptMs = i < 0 ? null : i * step;
    const before = trace[at(phaseMs) - 1];
    const after = trace.slice(at(2 * phaseMs));
    const j = after.findIndex((x) => x >= before - 1);
    recoverMs = j < 0 ? null : j * step;
  }
  return {
    variant,
    slowGoodPerSec: [phase(0), phase(1), phase(2)],
    slowTimeouts: slow.timeout,
    slowRejected: slow.rejected,
    fastP99Ms: fast.latencyMs.ok?.p99 ?? null,
    fastOk: fast.ok,
    fastSent: fast.sent,
    fastRejected: fast.rejected,
    adaptMs,
    recoverMs,
    limitRange: trace.length ? `${Math.min(...trace)}–${Math.max(...trace)}` : '–',
    valid: r.validity.valid,
  };
}

const results = [];
for (let round = 0; round < rounds; round++) {
  for (const [i, v] of variants.entries()) {
    process.stderr.write(`round ${round + 1}/${rounds}: ${v}\n`);
    results.push(await measure(v, 19_000 + round * 10 + i));
  }
}
if (values.json) console.log(JSON.stringify({ phaseMs, pinned, results }, null, 2));
else {
  console.log(
    `S4: /slow and /fast at 200 req/s each, ${phaseMs / 1000} s fast → ${phaseMs / 1000} s slow (10×) → ${phaseMs / 1000} s fast; ${pinned ? 'server CPU 0, load CPU 1' : 'not pinned'}\n`,
  );
  console.log(
    '| server | /slow goodput/s fast → slow → recovered | /slow timeouts | /slow refused | /fast ok p99 | /fast ok | limit | time to adapt | time to recover | valid |',
  );
  console.log('|---|---|---:|---:|---:|---:|---|---:|---:|---|');
  for (const r of results) {
    console.log(
      `| ${r.variant} | ${r.slowGoodPerSec.map((x) => x.toFixed(0)).join(' → ')} | ${r.slowTimeouts} | ${r.slowRejected} | ${r.fastP99Ms === null ? '–' : r.fastP99Ms.toFixed(1) + ' ms'} | ${r.fastOk}/${r.fastSent} | ${r.limitRange} | ${r.adaptMs === null ? '–' : (r.adaptMs / 1000).toFixed(2) + ' s'} | ${r.recoverMs === null ? '–' : (r.recoverMs / 1000).toFixed(2) + ' s'} | ${r.valid ? 'yes' : 'no'} |`,
    );
  }
}
