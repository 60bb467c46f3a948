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
// ratio is far steadier than either figure alone (lib/pinned-servers.js, shared with grpc-cost.js).
// Usage: node bench/http-cost.js --help
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { holdOneSlot } from './lib/hold-slot.js';
import { pickHttpCases } from './lib/http-cases.js';
import {
  interleave,
  loadNote,
  machineLine,
  phase,
  ratioRows,
  startServer,
} from './lib/pinned-servers.js';
import { pinSelfToCpu1 } from './lib/pinning.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    seconds: { type: 'string', default: '1' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    dist: { type: 'string', default: 'dist' },
    against: { type: 'string' },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(`Usage: node bench/http-cost.js [options]

S8: server CPU per 200, 429 and 503 for a bare node:http server, Spillway's guard on node:http,
Express, Fastify, Koa and Hono, and the peers, each server in its own process; every figure
divided by the same round's bare 503 (see the comment at the top of this file).

  --rounds N        rounds; each runs every case once, in a fresh random order (default 15)
  --seconds S       length of one case's phase in a round (default 1)
  --connections N   keep-alive connections, closed loop (default 32)
  --only a,b        only the cases whose names contain one of these; =name matches exactly
                    (the bare 503 always runs)
  --dist DIR        the build the servers load, relative to the repository's root (default dist)
  --against DIR     also run every chosen Spillway case on this build (rows marked "@ DIR"),
                    to compare a change in one run
  --cpu-prof DIR    profile every server (node --cpu-prof) into DIR, one <case>.cpuprofile each

  --json            machine-readable output`);
  process.exit(0);
}
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

const pinned = pinSelfToCpu1();
const cases = pickHttpCases(values.only);
/** Each server to start: its row's name, the case it runs and the build it loads. */
const runs = cases.map((kind) => ({ name: kind, kind, dist: values.dist }));
if (values.against !== undefined) {
  for (const kind of cases.filter((c) => c.includes('spillway'))) {
    runs.push({ name: `${kind} @ ${values.against}`, kind, dist: values.against });
  }
}
const profileDir = values['cpu-prof'];
const nodeArgs = (name) =>
  profileDir === undefined
    ? []
    : [
        '--cpu-prof',
        '--cpu-prof-dir',
        profileDir,
        '--cpu-prof-name',
        `${name.replace(/\W+/g, '_')}.cpuprofile`,
      ];
const script = new URL('./lib/http-servers.js', import.meta.url).pathname;

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

const loadBefore = loadavg();
const servers = new Map();
const width = Math.max(...runs.map((r) => r.name.length));
for (const { name, kind, dist } of runs) {
  process.stderr.write(`\rstarting and warming ${name.padEnd(width)}`);
  const { child, port, hold } = await startServer(script, kind, {
    dist,
    pinned,
    nodeArgs: nodeArgs(name),
  });
  const holder = hold ? await holdOneSlot(child, port) : undefined;
  const server = { child, holder, load: load(port) };
  await server.load.ready;
  await phase(server, 1000); // warm-up: JIT, buffers, the guard's own state
  servers.set(name, server);
}

const samples = await interleave(servers, { rounds, ms: phaseMs, width });
const machineLoad = loadNote(loadBefore);
for (const s of servers.values()) {
  await s.load.close();
  s.holder?.destroy();
  s.child.removeAllListeners('exit');
  // A profiled server writes its profile as it exits by itself.
  if (profileDir === undefined) s.child.kill('SIGKILL');
  else s.child.send({ cmd: 'exit' });
}

const rows = ratioRows(samples, 'bare 503').map((r) => ({
  ...r,
  statuses: [...servers.get(r.kind).load.counts.entries()].map(([s, c]) => `${s}×${c}`).join(' '),
}));
const machine = machineLine(pinned);
if (values.json) {
  const { loadBefore, loadAfter, busy } = machineLoad;
  console.log(
    JSON.stringify(
      { machine, loadBefore, loadAfter, busy, rounds, phaseMs, connections, rows },
      null,
      2,
    ),
  );
} else {
  console.log(
    `Machine: ${machine}; ${machineLoad.text}. ${rounds} rounds × ${phaseMs / 1000} s per server, ${connections} keep-alive connections, closed loop.\n`,
  );
  console.log(
    '| server | µs CPU per response (median) | IQR | × bare 503 (median of rounds) | IQR of the ratio | responses/s | statuses (all phases) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(
      `| ${r.kind} | ${r.us.toFixed(1)} | ${r.usLow.toFixed(1)}–${r.usHigh.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.ratioLow.toFixed(2)}–${r.ratioHigh.toFixed(2)} | ${Math.round(r.perSec).toLocaleString('en')} | ${r.statuses} |`,
    );
  }
}
