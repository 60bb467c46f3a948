// The refusal an abusive client gets, measured from outside (issue 27, item 9): wrk drives one
// greedy client over 32 keep-alive connections against each server pinned to CPU 0, wrk on
// CPU 1; the server's CPU is read from /proc (utime + stime), not asked of the server. Three
// (--rounds) interleaved rounds, each case's CPU per response divided by the same round's bare
// `res.end()` 503. The servers are S8's (lib/http-servers.js), plus `spillway serve bounded`
// started from the CLI exactly as a user runs it. S8's own driver (http-cost.js) is the verdict;
// this is the same question asked with another load tool, to catch what that driver hides.
//
// Usage: node bench/diagnostics/refusal-wrk.js [--rounds 3] [--seconds 5] [--connections 32]
//          [--only 'case,case'] [--json]
import { execFileSync, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { holdOneSlot } from '../lib/hold-slot.js';
import { loadNote, machineLine, startServer } from '../lib/pinned-servers.js';
import { processCpuUs } from '../lib/proc-cpu.js';
import { median, shuffle } from '../lib/stats.js';
import { benchOptions, usageError } from '../lib/usage.js';

const opts = benchOptions(new URL(import.meta.url), {
  rounds: { type: 'string', default: '3' },
  seconds: { type: 'string', default: '5' },
  connections: { type: 'string', default: '32' },
  only: { type: 'string' },
  json: { type: 'boolean', default: false },
});
const rounds = Number(opts.rounds);
const seconds = Number(opts.seconds);
const connections = Number(opts.connections);
for (const [name, n] of [
  ['--rounds', rounds],
  ['--seconds', seconds],
  ['--connections', connections],
]) {
  if (!Number.isInteger(n) || n < 1) usageError(`${name} must be a whole number ≥ 1, got ${n}`);
}
for (const tool of ['wrk', 'taskset']) {
  try {
    execFileSync('which', [tool], { stdio: 'ignore' });
  } catch {
    throw new Error(
      `${tool} is not installed (Debian: apt-get install ${tool === 'wrk' ? 'wrk' : 'util-linux'})`,
    );
  }
}

const base = 'bare 503';
const cli = 'spillway serve bounded (the CLI)';
const allCases = [
  base,
  'bare 503 keep-alive timeout',
  'spillway node 429',
  'spillway node 429 ignored',
  'spillway node 429 serve bounded',
  'spillway node 429 serve bounded refused only',
  cli,
];
const cases = opts.only ? [base, ...opts.only.split(',').filter((c) => c !== base)] : allCases;
for (const c of cases) if (!allCases.includes(c)) usageError(`--only: no case '${c}'`);

/** `spillway serve bounded` from the CLI on CPU 0; resolves with its child and port. */
function startCli() {
  const main = new URL('../../dist/cli/main.js', import.meta.url).pathname;
  const child = spawn('taskset', ['-c', '0', process.execPath, main, 'serve', 'bounded'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its log is kept, not shown: when wrk stops, the admitted requests it leaves behind are each
  // a line ("the client disconnected"). It is shown if the server fails to start.
  let log = '';
  child.stderr.on('data', (chunk) => void (log = (log + chunk).slice(-4_000)));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`serve bounded exited with ${code}:\n${log}`)));
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
  });
}

/** One wrk run of `secs` against `port`: responses, refusals among them, responses per second. */
function wrk(port, secs) {
  const args = ['-c', '1', 'wrk', '-t1', `-c${connections}`, `-d${secs}s`];
  args.push('-H', 'x-client-id: greedy', `http://127.0.0.1:${port}/`);
  const out = execFileSync('taskset', args, { encoding: 'utf8' });
  const total = Number(/(\d+) requests in/.exec(out)?.[1]);
  const refused = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const perSec = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  if (!(total > 0)) throw new Error(`wrk answered nothing on port ${port}:\n${out}`);
  return { total, refused, perSec };
}

const servers = new Map();
const holds = [];
for (const c of cases) {
  const server =
    c === cli
      ? await startCli()
      : await startServer(new URL('../lib/http-servers.js', import.meta.url).pathname, c, {
          dist: 'dist',
          pinned: true,
        });
  if (server.hold) holds.push(await holdOneSlot(server.child, server.port));
  servers.set(c, server);
}

const before = loadavg();
const samples = new Map(cases.map((c) => [c, []]));
// A warm-up second per server, so the first round does not pay for compiling.
for (const server of servers.values()) wrk(server.port, 1);
for (let r = 0; r < rounds; r++) {
  for (const c of shuffle([...cases], Math.random)) {
    process.stderr.write(`\rround ${r + 1}/${rounds}: ${c.padEnd(48)}`);
    const { child, port } = servers.get(c);
    const cpu0 = processCpuUs(child.pid);
    const run = wrk(port, seconds);
    samples.get(c).push({ ...run, us: (processCpuUs(child.pid) - cpu0) / run.total });
  }
}
process.stderr.write('\n');
for (const socket of holds) socket.destroy();
for (const { child } of servers.values()) child.kill();

const baseRounds = samples.get(base);
const rows = cases.map((c) => {
  const s = samples.get(c);
  const cpuRatios = s.map((x, i) => x.us / baseRounds[i].us);
  const rateRatios = s.map((x, i) => baseRounds[i].perSec / x.perSec);
  return {
    case: c,
    usPerResponse: median(s.map((x) => x.us)),
    perSec: median(s.map((x) => x.perSec)),
    refusedShare: median(s.map((x) => x.refused / x.total)),
    cpuRatio: median(cpuRatios),
    cpuRatios,
    rateRatio: median(rateRatios),
    rateRatios,
  };
});
const load = loadNote(before);
if (opts.json) {
  console.log(
    JSON.stringify(
      { machine: machineLine(true), load, rounds, seconds, connections, rows },
      null,
      2,
    ),
  );
} else {
  const fmt = (xs) => xs.map((x) => x.toFixed(2)).join(', ');
  console.log(`${machineLine(true)}; wrk -t1 -c${connections} -d${seconds}s, ${rounds} rounds`);
  console.log(load.text);
  console.log(
    `${'case'.padEnd(46)} ${'µs/resp'.padStart(8)} ${'resp/s'.padStart(8)} ${'refused'.padStart(8)}  × bare 503 in CPU (rounds)     × bare 503 in resp/s (rounds)`,
  );
  for (const r of rows) {
    console.log(
      `${r.case.padEnd(46)} ${r.usPerResponse.toFixed(1).padStart(8)} ${r.perSec.toFixed(0).padStart(8)} ${(r.refusedShare * 100).toFixed(1).padStart(7)}%  ${r.cpuRatio.toFixed(2)} (${fmt(r.cpuRatios)})`.padEnd(
        120,
      ) + `${r.rateRatio.toFixed(2)} (${fmt(r.rateRatios)})`,
    );
  }
}
