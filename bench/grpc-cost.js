#!/usr/bin/env node
// gRPC server CPU per call — what an OK, a RESOURCE_EXHAUSTED and an UNAVAILABLE cost a grpc-js
// server: bare handlers (the cheapest hand-written answers), Spillway's grpcAdmission through
// `guard.unary`, through `guard.interceptor` and through both, and the peers a grpc-js user
// would reach for. The gRPC counterpart of S8 (http-cost.js), measured the same way.
// Every server (lib/grpc-servers.js) runs in its own child process pinned to CPU 0 (when
// taskset exists), all of them started once; this process drives one at a time from CPU 1 with
// `--concurrency` unary calls in a closed loop over `--channels` HTTP/2 sessions (lib/grpc-load.js
// writes gRPC's framing itself, so the driver stays cheaper than the server) and reads the
// child's process.cpuUsage() around each phase. Phases are short and interleaved in a fresh
// random order every round, and each figure is divided by the bare UNAVAILABLE (with a
// `grpc-retry-pushback-ms` trailer) of the same round: the VM's slow spells move a whole round
// together, so the per-round ratio is far steadier than either figure alone.
// Peers: no package limits a grpc-js server (nice-grpc, the one other server framework, has no
// limiter either; grpc-js's own `grpc.max_concurrent_streams` queues streams in HTTP/2 rather
// than refusing them), so the peers are the general-purpose limiters a user puts in a handler
// by hand — rate-limiter-flexible's RateLimiterMemory and cockatiel's bulkhead — and the bare
// interceptor rows say what grpc-js's interceptor machinery costs by itself.
// Usage: node bench/grpc-cost.js --help
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { grpcBase, pickGrpcCases } from './lib/grpc-cases.js';
import { grpcLoad, holdOneCall, statusName } from './lib/grpc-load.js';
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
    concurrency: { type: 'string', default: '32' },
    channels: { type: 'string', default: '1' },
    only: { type: 'string' },
    dist: { type: 'string', default: 'dist' },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(`Usage: node bench/grpc-cost.js [options]

Server CPU per gRPC call (OK, RESOURCE_EXHAUSTED, UNAVAILABLE) for bare grpc-js handlers,
Spillway's grpcAdmission and the peers, each server in its own process; every figure divided by
the same round's bare UNAVAILABLE (see the comment at the top of this file).

  --rounds N       rounds; each runs every case once, in a fresh random order (default 15)
  --seconds S      length of one case's phase in a round (default 1)
  --concurrency N  unary calls in flight, closed loop (default 32)
  --channels N     HTTP/2 sessions the calls are spread over (default 1)
  --only a,b       only the cases whose names contain one of these (the base always runs)
  --dist DIR       the build the servers load, relative to the repository's root (default dist)
  --cpu-prof DIR   profile every server (node --cpu-prof) into DIR, one <case>.cpuprofile each
  --json           machine-readable output`);
  process.exit(0);
}
const rounds = Number(values.rounds);
const phaseMs = Number(values.seconds) * 1000;
const concurrency = Number(values.concurrency);
const channels = Number(values.channels);
for (const [name, v] of [
  ['--rounds', rounds],
  ['--seconds', phaseMs],
  ['--concurrency', concurrency],
  ['--channels', channels],
]) {
  if (!(v > 0)) throw new Error(`${name} must be a positive number`);
}
if (!Number.isInteger(channels) || channels > concurrency) {
  throw new Error(`--channels must be an integer no larger than --concurrency, not ${channels}`);
}

const pinned = pinSelfToCpu1();
const cases = pickGrpcCases(values.only);
const script = new URL('./lib/grpc-servers.js', import.meta.url).pathname;
const profileDir = values['cpu-prof'];
const nodeArgs = (kind) =>
  profileDir === undefined
    ? []
    : ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', `${kind}.cpuprofile`];

const loadBefore = loadavg();
const servers = new Map();
for (const kind of cases) {
  process.stderr.write(`\rstarting and warming ${kind.padEnd(44)}`);
  const { child, port, hold } = await startServer(script, kind, {
    dist: values.dist,
    pinned,
    nodeArgs: nodeArgs(kind),
  });
  const holder = hold ? await holdOneCall(child, port) : undefined;
  const server = { child, holder, load: grpcLoad(port, { concurrency, channels }) };
  await server.load.ready;
  await phase(server, 1000); // warm-up: JIT, buffers, the guard's own state
  servers.set(kind, server);
}

const samples = await interleave(servers, { rounds, ms: phaseMs, width: 44 });
const load = loadNote(loadBefore);
for (const s of servers.values()) {
  s.load.close();
  s.holder?.destroy();
  s.child.removeAllListeners('exit');
  // A profiled server writes its profile as it exits by itself.
  if (profileDir === undefined) s.child.kill('SIGKILL');
  else s.child.send({ cmd: 'exit' });
}

const rows = ratioRows(samples, grpcBase).map((r) => ({
  ...r,
  statuses: [...servers.get(r.kind).load.counts.entries()]
    .map(([code, n]) => `${statusName(code)}×${n}`)
    .join(' '),
}));
const machine = machineLine(pinned);
if (values.json) {
  console.log(
    JSON.stringify(
      {
        machine,
        loadBefore: load.loadBefore,
        loadAfter: load.loadAfter,
        busy: load.busy,
        dist: values.dist,
        rounds,
        phaseMs,
        concurrency,
        channels,
        rows,
      },
      null,
      2,
    ),
  );
} else {
  console.log(
    `Machine: ${machine}; ${load.text}. Build: ${values.dist}. ${rounds} rounds × ${phaseMs / 1000} s per server, ${concurrency} unary calls in flight over ${channels} HTTP/2 session${channels === 1 ? '' : 's'}, closed loop.\n`,
  );
  console.log(
    `| server | µs CPU per call (median) | IQR | × ${grpcBase} (median of rounds) | IQR of the ratio | calls/s | driver µs CPU per call | statuses (all phases) |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(
      `| ${r.kind} | ${r.us.toFixed(1)} | ${r.usLow.toFixed(1)}–${r.usHigh.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.ratioLow.toFixed(2)}–${r.ratioHigh.toFixed(2)} | ${Math.round(r.perSec).toLocaleString('en')} | ${r.driverUs.toFixed(1)} | ${r.statuses} |`,
    );
  }
}
