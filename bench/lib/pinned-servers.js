// What the server-CPU benchmarks (http-cost.js, grpc-cost.js) share: servers each in a child
// process pinned to CPU 0, this process on CPU 1 (BENCHMARKS.md rule 6), the child's CPU read
// over IPC around a phase of load, cases interleaved in a fresh random order every round, and
// every figure divided by the same round's base case (the VM's slow spells move a whole round
// together, so the per-round ratio is far steadier than either figure alone).
// A server script (lib/http-servers.js, lib/grpc-servers.js) sends `{ port, hold }` once it
// listens and answers `{ cmd: 'cpu' }` with `{ cpu: process.cpuUsage() }`.
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { shuffle } from './stats.js';

/**
 * Starts `script kind dist` in a child process (on CPU 0 when `pinned`), resolving with
 * `{ child, port, hold }` once it says it listens. `nodeArgs` go before the script.
 */
export function startServer(script, kind, { dist, pinned, nodeArgs = [] }) {
  const node = [process.execPath, ...nodeArgs, script, kind, dist];
  const [cmd, args] = pinned ? ['taskset', ['-c', '0', ...node]] : [node[0], node.slice(1)];
  const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
    child.once('message', (m) => resolve({ child, port: m.port, hold: m.hold }));
  });
}

/** The child's `process.cpuUsage()`, asked over IPC. */
function childCpu(child) {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m.cpu));
    child.send({ cmd: 'cpu' });
  });
}

/**
 * One phase on one server (`{ child, load }`, `load` with `total`, `start()` and `stop()`): its
 * CPU and this process's per answer, with nothing in flight before or after.
 */
export async function phase(server, ms) {
  const before = await childCpu(server.child);
  const n0 = server.load.total;
  const t0 = performance.now();
  const own = process.cpuUsage();
  await server.load.start();
  await new Promise((r) => setTimeout(r, ms));
  await server.load.stop();
  const seconds = (performance.now() - t0) / 1000;
  const driver = process.cpuUsage(own);
  const after = await childCpu(server.child);
  const n = server.load.total - n0;
  return {
    us: (after.user - before.user + (after.system - before.system)) / n,
    perSec: n / seconds,
    driverUs: (driver.user + driver.system) / n,
  };
}

/**
 * Runs `rounds` rounds over `servers` (a Map of case → server), each case once per round in a
 * fresh random order, a phase of `ms` each; returns case → the phases' figures, in round order.
 */
export async function interleave(servers, { rounds, ms, width }) {
  const samples = new Map([...servers.keys()].map((c) => [c, []]));
  for (let r = 0; r < rounds; r++) {
    for (const kind of shuffle([...servers.keys()], Math.random)) {
      process.stderr.write(`\rround ${r + 1}/${rounds}: ${kind.padEnd(width)}`);
      samples.get(kind).push(await phase(servers.get(kind), ms));
    }
  }
  process.stderr.write('\n');
  return samples;
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const quantile = (xs, q) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const median = (xs) => quantile(xs, 0.5);

/**
 * A row per case: its µs per answer (median, IQR), its ratio over `base` round by round
 * (median, IQR), answers per second, the driver's µs per answer and each round's µs.
 */
export function ratioRows(samples, base) {
  const baseRounds = samples.get(base).map((m) => m.us);
  return [...samples.entries()].map(([kind, phases]) => {
    const us = phases.map((m) => m.us);
    const ratios = us.map((x, i) => x / baseRounds[i]);
    return {
      kind,
      us: median(us),
      usLow: quantile(us, 0.25),
      usHigh: quantile(us, 0.75),
      ratio: median(ratios),
      ratioLow: quantile(ratios, 0.25),
      ratioHigh: quantile(ratios, 0.75),
      perSec: median(phases.map((m) => m.perSec)),
      driverUs: median(phases.map((m) => m.driverUs)),
      rounds: us.map((x) => Number(x.toFixed(2))),
    };
  });
}

/** The machine, and whether the servers were pinned. */
export function machineLine(pinned) {
  const where = pinned ? 'servers on CPU 0, load on CPU 1' : 'not pinned (no taskset)';
  return `${cpus()[0]?.model ?? 'CPU'} × ${cpus().length}, Node ${process.version}, ${where}`;
}

/**
 * The load averages before (`before`, from `loadavg()`) and now, and whether other work shared
 * the CPUs (a 1-minute average over half the cores at either end).
 */
export function loadNote(before) {
  const after = loadavg();
  const fmt = (l) => l.map((x) => x.toFixed(1)).join(' / ');
  const busy = before[0] > cpus().length * 0.5 || after[0] > cpus().length * 0.5;
  return {
    loadBefore: before,
    loadAfter: after,
    busy,
    text: `load average (1/5/15 min) ${fmt(before)} before, ${fmt(after)} after${busy ? ' — BUSY: other work shared the CPUs, read the ratios, not the µs' : ''}`,
  };
}
