#!/usr/bin/env node
// A diagnostic of S8 (the verdict is bench/http-cost.js, in CPU time): the same servers counted
// in instructions, each run under valgrind's callgrind, which counts the instructions the server
// process executes in user space. Unlike CPU time on a shared VM, the count repeats from run to
// run and does not move when the machine is busy, so it can tell a small change from noise
// (BENCHMARKS.md, S8, gives how closely runs agree). It leaves out the kernel's
// share (the socket read and write: one of each per response for every case, checked with
// strace -c), so a ratio of instruction counts overstates a ratio of CPU times, never understates.
// V8 runs --single-threaded so that compilation and GC work land on the counted thread in the
// same way every run, and with its young generation fixed at 16 MB: left to grow, its size
// depends on measured throughput, so runs of one build collected garbage more or less often and
// counted apart (each scavenge is a large, fixed cost of root scanning). Each
// server answers W requests to warm up over 8 keep-alive connections, then its counters are
// zeroed, it answers N more over the same connections, and the count is read. Two servers run
// at once (counts do not depend on contention). The request holding a 503 case's only slot
// comes from this process (see lib/hold-slot.js). The collector's share is counted apart (its
// own functions, from callgrind_annotate): a scavenge is one large lump, so whether one lands
// among the counted requests can move a total by more than a change being looked for, and the
// counts without it are the ones to compare.
// Usage: node bench/diagnostics/http-instructions.js [--requests 10000] [--warmup 20000]
//          [--only a,b] [--dist dist] [--json]
// --dist: the build the servers load, a folder at the repository's root (default dist).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { holdOneSlot } from '../lib/hold-slot.js';
import { pickHttpCases } from '../lib/http-cases.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '20000' },
    only: { type: 'string' },
    dist: { type: 'string', default: 'dist' },
    json: { type: 'boolean', default: false },
  },
});
const requests = Number(values.requests);
const warmup = Number(values.warmup);
if (!(requests > 0) || !(warmup >= 0)) throw new Error('--requests and --warmup must be numbers');
try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  console.error(
    "valgrind is not installed (Debian's valgrind package); see bench/http-cost.js for CPU time",
  );
  process.exit(2);
}

const cases = pickHttpCases(values.only);

const dir = mkdtempSync(join(tmpdir(), 'spillway-callgrind-'));
const request = Buffer.from('GET /work HTTP/1.1\r\nHost: bench\r\nConnection: keep-alive\r\n\r\n');

/** `n` requests over `sockets`, each in a closed loop; resolves when all are answered. */
function drive(sockets, n) {
  return new Promise((resolve) => {
    let left = n;
    let done = 0;
    for (const s of sockets) {
      s.onAnswer = () => {
        done++;
        if (left > 0) {
          left--;
          s.write(request);
        }
        if (done === n) resolve();
      };
      if (left > 0) {
        left--;
        s.write(request);
      }
    }
  });
}

function open(port) {
  const socket = connect(port, '127.0.0.1');
  let buffered = '';
  socket.on('data', (chunk) => {
    buffered += chunk.toString('latin1');
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      const m = /\r\ncontent-length: *(\d+)/i.exec(buffered.slice(0, end));
      const size = end + 4 + (m ? Number(m[1]) : 0);
      if (buffered.length < size) return;
      buffered = buffered.slice(size);
      socket.onAnswer();
    }
  });
  socket.on('error', (e) => {
    throw new Error(`connection to port ${port} failed: ${e.message}`);
  });
  return new Promise((resolve) => socket.once('connect', () => resolve(socket)));
}

async function count(kind) {
  const prefix = kind.replace(/\W+/g, '_');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, `${prefix}.%p`)}`,
      process.execPath,
      '--single-threaded',
      '--min-semi-space-size=16',
      '--max-semi-space-size=16',
      new URL('../lib/http-servers.js', import.meta.url).pathname,
      kind,
      values.dist,
    ],
    { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] },
  );
  const { port, hold } = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
    child.on('message', (m) => m.port !== undefined && resolve(m));
  });
  const holder = hold ? await holdOneSlot(child, port) : undefined;
  const sockets = await Promise.all(Array.from({ length: 8 }, () => open(port)));
  await drive(sockets, warmup);
  execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
  await drive(sockets, requests);
  execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
  for (const s of sockets) s.destroy();
  holder?.destroy();
  child.removeAllListeners('exit');
  child.kill('SIGKILL');
  const file = readdirSync(dir).find((f) => f.startsWith(`${prefix}.${child.pid}.`));
  const summary = /^summary: (\d+)$/m.exec(readFileSync(join(dir, file), 'utf8'));
  return { total: Number(summary[1]) / requests, gc: collectorShare(join(dir, file)) / requests };
}

// The collector's own functions (scavenges, marking, sweeping, the write barrier), wherever they
// ran: a scavenge is a large lump, and whether one or two land among the counted requests moves
// a total by more than the difference being looked for.
const collector =
  /v8::internal::(Scaveng|Mark|Sweeper|Heap::|ConcurrentMarking|IncrementalMarking|Evacuat|RememberedSet|PretenuringHandler|LiveObjectRange|BodyDescriptor|HeapObject::SizeFromMap|SemiSpace|PagedSpace|MemoryAllocator|ArrayBufferSweeper|GlobalHandles|\w*Visitor)|heap::base::|Builtins_RecordWrite/;

/** Instructions the collector's own functions executed in `file` (callgrind_annotate, self cost). */
function collectorShare(file) {
  let out;
  try {
    out = execFileSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', file], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch {
    return NaN;
  }
  let sum = 0;
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line);
    if (m && collector.test(m[2])) sum += Number(m[1].replaceAll(',', ''));
  }
  return sum;
}

const results = new Map();
const queue = [...cases];
let finished = 0;
async function worker() {
  for (let kind = queue.shift(); kind !== undefined; kind = queue.shift()) {
    results.set(kind, await count(kind));
    process.stderr.write(`\r${++finished}/${cases.length} counted (${kind})`.padEnd(60));
  }
}
await Promise.all([worker(), worker()]);
process.stderr.write('\n');
if (process.env.KEEP_CALLGRIND === undefined) rmSync(dir, { recursive: true, force: true });
else process.stderr.write(`callgrind files kept in ${dir}\n`);

const bare = results.get('bare 503');
const rows = cases.map((kind) => {
  const { total, gc } = results.get(kind);
  return {
    kind,
    instructionsPerResponse: Math.round(total),
    ratio: total / bare.total,
    collectorPerResponse: Math.round(gc),
    withoutCollector: Math.round(total - gc),
    withoutCollectorRatio: (total - gc) / (bare.total - bare.gc),
  };
});
if (values.json) {
  console.log(JSON.stringify({ node: process.version, requests, warmup, rows }, null, 2));
} else {
  console.log(
    `Node ${process.version}; user-space instructions per response, ${warmup} warm-up and ${requests} counted requests per server.\n`,
  );
  console.log(
    '| server | instructions per response | × bare 503 | of which the collector | without the collector | × bare 503 without |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.kind} | ${r.instructionsPerResponse.toLocaleString('en')} | ${r.ratio.toFixed(3)} | ${r.collectorPerResponse.toLocaleString('en')} | ${r.withoutCollector.toLocaleString('en')} | ${r.withoutCollectorRatio.toFixed(3)} |`,
    );
  }
}
