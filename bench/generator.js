#!/usr/bin/env node
// How fast is the load generator itself? Offers --rate req/s from one core against a trivial
// server pinned to the other core (when taskset exists), and reports the rate the generator
// achieved and its schedule lag. Target (issue 4): 20,000 req/s with lag p99 <= 5 ms.
// --server http (the default) is a node:http server, which at 20,000 req/s uses ~90 % of its
// core on this VM, so its own pauses pile requests up in flight; --server raw answers every
// request with one canned response written straight to the socket, a few µs of work, to tell
// the generator's own lateness from the server's.
// Usage: npm run build && node bench/generator.js [--rate 20000] [--duration 5] [--warmup 1]
//        [--server raw|http] [--json]
import { spawn, spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { runLoad } from '../dist/load/index.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '20000' },
    duration: { type: 'string', default: '5' },
    'deadline-ms': { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '1' },
    server: { type: 'string', default: 'http' },
    json: { type: 'boolean', default: false },
  },
});
const rate = Number(values.rate);
const durationMs = Number(values.duration) * 1000;
if (values.server !== 'raw' && values.server !== 'http') {
  throw new Error(`--server must be raw or http, got ${values.server}`);
}
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;

// Pin ourselves to core 1 by re-running under taskset (once).
if (hasTaskset && process.env.SPILLWAY_BENCH_PINNED === undefined) {
  const child = spawn('taskset', ['-c', '1', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, SPILLWAY_BENCH_PINNED: '1' },
  });
  child.on('exit', (code) => process.exit(code ?? 1));
} else {
  await main();
}

async function main() {
  const httpServer = `
    const { createServer } = require('node:http');
    let n = 0;
    const s = createServer((req, res) => { if (req.url === '/measure') n++; res.end('ok'); });
    s.keepAliveTimeout = 60_000;
    s.listen(0, '127.0.0.1', () => process.stdout.write(s.address().port + '\\n'));
    process.on('SIGTERM', () => { process.stdout.write('served ' + n + '\\n'); process.exit(0); });
  `;
  // Requests are bodiless GETs: each ends at a blank line (one may straddle two reads).
  const rawServer = `
    const { createServer } = require('node:net');
    const answer = Buffer.from('HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nKeep-Alive: timeout=60\\r\\n\\r\\nok');
    let n = 0;
    const s = createServer((socket) => {
      let tail = '';
      socket.on('error', () => {});
      socket.on('data', (chunk) => {
        const text = tail + chunk.toString('latin1');
        let count = 0;
        for (let i = text.indexOf('\\r\\n\\r\\n'); i !== -1; i = text.indexOf('\\r\\n\\r\\n', i + 4)) count++;
        const last = text.lastIndexOf('\\r\\n\\r\\n');
        tail = text.slice(Math.max(last === -1 ? 0 : last + 4, text.length - 3));
        if (count === 0) return;
        n += count;
        socket.write(count === 1 ? answer : Buffer.concat(Array(count).fill(answer)));
      });
    });
    s.listen(0, '127.0.0.1', () => process.stdout.write(s.address().port + '\\n'));
    process.on('SIGTERM', () => { process.stdout.write('served ' + n + '\\n'); process.exit(0); });
  `;
  const server = values.server === 'raw' ? rawServer : httpServer;
  const command = hasTaskset ? 'taskset' : process.execPath;
  const args = hasTaskset ? ['-c', '0', process.execPath, '-e', server] : ['-e', server];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const port = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve(Number(line));
    });
    child.on('exit', () => reject(new Error('server exited')));
  });
  // A cold server (no JIT yet) answers slowly at first: warm both sides up at the full rate,
  // over the connections the measured run then uses, and record none of it.
  const result = await runLoad({
    url: `http://127.0.0.1:${port}/measure`,
    ratePerSec: rate,
    durationMs,
    warmupMs: Number(values.warmup) * 1000,
    deadlineMs: Number(values['deadline-ms']),
    label: `generator at ${rate} req/s`,
  });
  const served = await new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      const m = /served (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
    child.kill('SIGTERM');
  });
  const t = result.totals;
  const summary = {
    targetPerSec: rate,
    durationMs,
    pinned: hasTaskset,
    sentPerSec: Math.round(t.sent / (durationMs / 1000)),
    // The server counts the warm-up's requests too: its rate is over both.
    servedPerSec: Math.round(served / ((durationMs + Number(values.warmup) * 1000) / 1000)),
    okPerSec: t.okPerSec,
    dropped: t.dropped,
    timeouts: t.timeout,
    network: t.network,
    lagMs: result.validity.scheduleLagMs,
    generatorCpuPercent: result.validity.cpuPercent,
    okP99Ms: t.latencyMs.ok?.p99 ?? null,
    peakConnections: result.peakConnections,
    loadAvg1: result.machine.loadAvg1,
    cpu: `${result.machine.cpuModel} (${result.machine.cpus} CPUs)`,
  };
  const pass = summary.sentPerSec >= rate * 0.98 && summary.lagMs.p99 <= 5 && t.dropped === 0;
  if (values.json) {
    console.log(JSON.stringify({ ...summary, pass }, null, 2));
  } else {
    console.log(
      `generator benchmark: ${rate} req/s for ${durationMs / 1000} s against a ${values.server} server (${hasTaskset ? 'server on core 0, generator on core 1' : 'not pinned: taskset missing'})`,
    );
    console.log(`  machine        ${summary.cpu}, load average ${summary.loadAvg1}`);
    console.log(
      `  sent           ${summary.sentPerSec} req/s (target ${rate}); server saw ${summary.servedPerSec} req/s`,
    );
    console.log(
      `  ok             ${summary.okPerSec} req/s, p99 ${summary.okP99Ms} ms; timeouts ${summary.timeouts}, network ${summary.network}, dropped ${summary.dropped}`,
    );
    console.log(
      `  schedule lag   p50 ${summary.lagMs.p50} ms, p99 ${summary.lagMs.p99} ms, max ${summary.lagMs.max} ms (target p99 <= 5 ms)`,
    );
    console.log(
      `  generator CPU  ${summary.generatorCpuPercent} % of one core; peak connections ${summary.peakConnections}`,
    );
    console.log(
      `  ${pass ? 'PASS' : 'FAIL'}: ${pass ? 'the generator kept its schedule' : 'the generator (or the server, or the machine) could not keep up'}`,
    );
  }
  process.exitCode = pass ? 0 : 1;
}
