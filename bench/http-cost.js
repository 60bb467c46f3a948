#!/usr/bin/env node
// S8: server CPU per response — what a 200, a 429 and a 503 cost the server, for a bare
// node:http server, Spillway on node, Express and Fastify, and the peers users would pick.
// Each server runs alone in a child process pinned to CPU 0 (when taskset exists); this
// process drives it from CPU 1 with 32 keep-alive connections (closed loop: this measures
// cost per response, not latency), and reads the child's process.cpuUsage() around a timed
// phase. Cases are interleaved over rounds, and every figure is also given as a ratio to the
// bare `res.end()` 503 measured in the same run.
// Usage: node bench/http-cost.js [--rounds 3] [--seconds 3] [--connections 32] [--only substring]
import { execFileSync, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const phaseMs = Number(values.seconds) * 1000;
const connections = Number(values.connections);

const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const allCases = [
  'bare 200',
  'bare 503',
  'bare 503 + problem+json',
  'spillway node 200',
  'spillway node 429',
  'spillway node 503',
  'spillway express 429',
  'spillway express 503',
  'spillway fastify 429',
  'spillway fastify 503',
  'express-rate-limit 8 429',
  '@fastify/rate-limit 11 429',
  '@fastify/under-pressure 9 503',
  'cockatiel 3 bulkhead 503',
];
const cases = values.only
  ? allCases.filter((c) => c.includes(values.only) || c === 'bare 503')
  : allCases;

function startServer(kind) {
  const script = new URL('./http-servers.js', import.meta.url).pathname;
  const [cmd, args] = hasTaskset
    ? ['taskset', ['-c', '0', process.execPath, script, kind]]
    : [process.execPath, [script, kind]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
    child.once('message', (m) => resolve({ child, port: m.port }));
  });
}

function serverCpu(child) {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m.cpu));
    child.send({ cmd: 'cpu' });
  });
}

/** One keep-alive connection in a closed loop: send, read one whole response, repeat. */
function driver(port, counts) {
  const req = Buffer.from('GET /work HTTP/1.1\r\nHost: bench\r\nConnection: keep-alive\r\n\r\n');
  let stopped = false;
  let buffered = Buffer.alloc(0);
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const next = () => {
    if (!stopped) socket.write(req);
  };
  socket.on('connect', next);
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const status = Number(head.slice(9, 12));
      const m = /\r\ncontent-length: *(\d+)/i.exec(head);
      let total;
      if (m) total = end + 4 + Number(m[1]);
      else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
        const z = buffered.indexOf('0\r\n\r\n', end + 4);
        if (z === -1) return;
        total = z + 5;
      } else total = end + 4;
      if (buffered.length < total) return;
      buffered = buffered.subarray(total);
      counts.set(status, (counts.get(status) ?? 0) + 1);
      counts.total++;
      next();
    }
  });
  return () => {
    stopped = true;
    socket.destroy();
  };
}

async function measure(kind) {
  const { child, port } = await startServer(kind);
  const counts = new Map();
  counts.total = 0;
  const stops = Array.from({ length: connections }, () => driver(port, counts));
  await new Promise((r) => setTimeout(r, 1000)); // warm-up
  const before = await serverCpu(child);
  const n0 = counts.total;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, phaseMs));
  const after = await serverCpu(child);
  const n = counts.total - n0;
  const seconds = (performance.now() - t0) / 1000;
  stops.forEach((s) => s());
  child.removeAllListeners('exit');
  child.kill('SIGKILL');
  const cpuUs = after.user - before.user + (after.system - before.system);
  const statuses = [...counts.entries()].map(([s, c]) => `${s}×${c}`).join(' ');
  return { kind, usPerResponse: cpuUs / n, perSec: n / seconds, statuses };
}

function shuffle(a) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

const samples = new Map(cases.map((c) => [c, []]));
const seen = new Map();
for (let r = 0; r < rounds; r++) {
  for (const kind of shuffle([...cases])) {
    process.stderr.write(`\rround ${r + 1}/${rounds}: ${kind.padEnd(34)}`);
    const m = await measure(kind);
    samples.get(kind).push(m.usPerResponse);
    seen.set(kind, m);
  }
}
process.stderr.write('\n');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const bare = median(samples.get('bare 503'));
const rows = cases.map((kind) => {
  const xs = samples.get(kind);
  return {
    kind,
    usPerResponse: median(xs),
    min: Math.min(...xs),
    max: Math.max(...xs),
    ratio: median(xs) / bare,
    perSec: seen.get(kind).perSec,
    statuses: seen.get(kind).statuses,
  };
});
const machine = `${cpus()[0]?.model ?? 'CPU'} × ${cpus().length}, Node ${process.version}, ${hasTaskset ? 'server on CPU 0, load on CPU 1' : 'not pinned (no taskset)'}`;
if (values.json) {
  console.log(JSON.stringify({ machine, rounds, phaseMs, connections, rows }, null, 2));
} else {
  console.log(
    `Machine: ${machine}. ${rounds} rounds × ${phaseMs / 1000} s, ${connections} keep-alive connections.\n`,
  );
  console.log(
    '| server | µs CPU per response (median) | range | × bare 503 | responses/s | statuses (last round) |',
  );
  console.log('|---|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(
      `| ${r.kind} | ${r.usPerResponse.toFixed(1)} | ${r.min.toFixed(1)}–${r.max.toFixed(1)} | ${r.ratio.toFixed(2)} | ${Math.round(r.perSec).toLocaleString('en')} | ${r.statuses} |`,
    );
  }
}
