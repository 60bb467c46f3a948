#!/usr/bin/env node
// S8: server CPU per response — what a 200, a 429 and a 503 cost the server, for a bare
// node:http server, Spillway on node, Express, Fastify, Koa and Hono, and the peers users
// would pick.
// Every server runs in its own child process pinned to CPU 0 (when taskset exists), all of them
// started once; this process drives one at a time from CPU 1 with 32 keep-alive connections
// (closed loop, as wrk does: this measures cost per response, not latency) and reads the
// child's process.cpuUsage() around each phase. Phases are short and interleaved in a fresh
// random order every round, and each figure is divided by the bare `res.end()` 503 of the same
// round: the VM's slow spells last seconds and move a whole round together, so the per-round
// ratio is far steadier than either figure alone.
// Usage: node bench/http-cost.js [--rounds 15] [--seconds 1] [--connections 32] [--only a,b]
//          [--dist dist] [--json]
// --dist: the build the servers load, a folder at the repository's root (default dist).
import { execFileSync, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { holdOneSlot } from './lib/hold-slot.js';
import { pickHttpCases } from './lib/http-cases.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    seconds: { type: 'string', default: '1' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    dist: { type: 'string', default: 'dist' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const phaseMs = Number(values.seconds) * 1000;
const connections = Number(values.connections);
for (const [name, v] of [
  ['--rounds', rounds],
  ['--seconds', phaseMs],
  ['--connections', connections],
]) {
  if (!(v > 0)) throw new Error(`${name} must be a positive number`);
}

const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const cases = pickHttpCases(values.only);

function startServer(kind) {
  const script = new URL('./lib/http-servers.js', import.meta.url).pathname;
  const [cmd, args] = hasTaskset
    ? ['taskset', ['-c', '0', process.execPath, script, kind, values.dist]]
    : [process.execPath, [script, kind, values.dist]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
    child.once('message', (m) => resolve({ child, port: m.port, hold: m.hold }));
  });
}

function serverCpu(child) {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m.cpu));
    child.send({ cmd: 'cpu' });
  });
}

const request = Buffer.from('GET /work HTTP/1.1\r\nHost: bench\r\nConnection: keep-alive\r\n\r\n');

/**
 * `connections` keep-alive connections to one server, each in a closed loop (send, read one
 * whole response, send again) while running; `stop()` resolves once every answer is in.
 */
function load(port) {
  const counts = new Map();
  let total = 0;
  let running = false;
  let busy = 0;
  let drained = () => {};
  let closing = false;
  const sockets = Array.from({ length: connections }, () => {
    let buffered = Buffer.alloc(0);
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    socket.on('error', (e) => {
      throw new Error(`connection to the ${port} server failed: ${e.message}`);
    });
    socket.on('data', (chunk) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const status = Number(head.slice(9, 12));
        const m = /\r\ncontent-length: *(\d+)/i.exec(head);
        let size;
        if (m) size = end + 4 + Number(m[1]);
        else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
          const z = buffered.indexOf('0\r\n\r\n', end + 4);
          if (z === -1) return;
          size = z + 5;
        } else size = end + 4;
        if (buffered.length < size) return;
        buffered = buffered.subarray(size);
        counts.set(status, (counts.get(status) ?? 0) + 1);
        total++;
        if (running) socket.write(request);
        else if (--busy === 0) drained();
      }
    });
    socket.on('close', () => {
      if (!closing) throw new Error(`the server on port ${port} closed a connection`);
    });
    return new Promise((resolve) => socket.once('connect', () => resolve(socket)));
  });
  return {
    ready: Promise.all(sockets),
    get total() {
      return total;
    },
    counts,
    async start() {
      running = true;
      busy = connections;
      for (const s of await Promise.all(sockets)) s.write(request);
    },
    stop() {
      running = false;
      return new Promise((resolve) => {
        drained = resolve;
        if (busy === 0) resolve();
      });
    },
    close: async () => {
      closing = true;
      for (const s of await Promise.all(sockets)) s.destroy();
    },
  };
}

/** One phase on one server: CPU per response, with nothing in flight before or after. */
async function phase(server, ms) {
  const before = await serverCpu(server.child);
  const n0 = server.load.total;
  const t0 = performance.now();
  await server.load.start();
  await new Promise((r) => setTimeout(r, ms));
  await server.load.stop();
  const seconds = (performance.now() - t0) / 1000;
  const after = await serverCpu(server.child);
  const n = server.load.total - n0;
  const cpuUs = after.user - before.user + (after.system - before.system);
  return { usPerResponse: cpuUs / n, perSec: n / seconds };
}

function shuffle(a) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

const servers = new Map();
for (const kind of cases) {
  process.stderr.write(`\rstarting and warming ${kind.padEnd(34)}`);
  const { child, port, hold } = await startServer(kind);
  const holder = hold ? await holdOneSlot(child, port) : undefined;
  const server = { child, holder, load: load(port) };
  await server.load.ready;
  await phase(server, 1000); // warm-up: JIT, buffers, the guard's own state
  servers.set(kind, server);
}

const samples = new Map(cases.map((c) => [c, []]));
for (let r = 0; r < rounds; r++) {
  for (const kind of shuffle([...cases])) {
    process.stderr.write(`\rround ${r + 1}/${rounds}: ${kind.padEnd(34)}`);
    samples.get(kind).push(await phase(servers.get(kind), phaseMs));
  }
}
process.stderr.write('\n');
for (const s of servers.values()) {
  await s.load.close();
  s.holder?.destroy();
  s.child.removeAllListeners('exit');
  s.child.kill('SIGKILL');
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const quantile = (xs, q) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const median = (xs) => quantile(xs, 0.5);
const bareRounds = samples.get('bare 503').map((m) => m.usPerResponse);
const rows = cases.map((kind) => {
  const us = samples.get(kind).map((m) => m.usPerResponse);
  // Each round's figure over the bare 503 of the same round.
  const ratios = us.map((x, i) => x / bareRounds[i]);
  return {
    kind,
    usPerResponse: median(us),
    usLow: quantile(us, 0.25),
    usHigh: quantile(us, 0.75),
    ratio: median(ratios),
    ratioLow: quantile(ratios, 0.25),
    ratioHigh: quantile(ratios, 0.75),
    perSec: median(samples.get(kind).map((m) => m.perSec)),
    rounds: us.map((x) => Number(x.toFixed(2))),
    statuses: [...servers.get(kind).load.counts.entries()].map(([s, c]) => `${s}×${c}`).join(' '),
  };
});
const machine = `${cpus()[0]?.model ?? 'CPU'} × ${cpus().length}, Node ${process.version}, ${hasTaskset ? 'servers on CPU 0, load on CPU 1' : 'not pinned (no taskset)'}`;
if (values.json) {
  console.log(JSON.stringify({ machine, rounds, phaseMs, connections, rows }, null, 2));
} else {
  console.log(
    `Machine: ${machine}. ${rounds} rounds × ${phaseMs / 1000} s per server, ${connections} keep-alive connections, closed loop.\n`,
  );
  console.log(
    '| server | µs CPU per response (median) | IQR | × bare 503 (median of rounds) | IQR of the ratio | responses/s | statuses (all phases) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(
      `| ${r.kind} | ${r.usPerResponse.toFixed(1)} | ${r.usLow.toFixed(1)}–${r.usHigh.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.ratioLow.toFixed(2)}–${r.ratioHigh.toFixed(2)} | ${Math.round(r.perSec).toLocaleString('en')} | ${r.statuses} |`,
    );
  }
}
