#!/usr/bin/env node
// A diagnostic of S8 (the verdict is bench/http-cost.js, in CPU time): the same servers counted
// in instructions under callgrind (lib/callgrind.js says how, and why the collector's share is
// counted apart: compare the counts without it). The kernel's share left out is the socket read
// and write, one of each per response for every case (checked with strace -c). Each server
// answers W requests to warm up over 8 keep-alive connections, then its counters are zeroed, it
// answers N more over the same connections, and the count is read. The request holding a 503
// case's only slot comes from this process (see lib/hold-slot.js).
// Usage: node bench/diagnostics/http-instructions.js [--requests 10000] [--warmup 20000]
//          [--only a,b] [--dist dist] [--json]
// --dist: the build the servers load, a folder at the repository's root (default dist).
import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import {
  callgrindDir,
  countInstructions,
  message,
  requireValgrind,
  stillCompilingNote,
  twoAtATime,
} from '../lib/callgrind.js';
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
requireValgrind('bench/http-cost.js for CPU time');

const cases = pickHttpCases(values.only);

const counts = callgrindDir('http');
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
  const script = new URL('../lib/http-servers.js', import.meta.url).pathname;
  const { instructions, collector, compiler } = await countInstructions(
    { dir: counts.dir, label: kind, args: [script, kind, values.dist] },
    async (child, zero) => {
      const { port, hold } = await message(child, (m) => m.port !== undefined);
      const holder = hold ? await holdOneSlot(child, port) : undefined;
      const sockets = await Promise.all(Array.from({ length: 8 }, () => open(port)));
      await drive(sockets, warmup);
      zero();
      await drive(sockets, requests);
      for (const s of sockets) s.destroy();
      holder?.destroy();
    },
  );
  return {
    total: instructions / requests,
    gc: collector / requests,
    compiler: compiler / requests,
  };
}

const results = await twoAtATime(cases, count);
counts.done();
const notWarm = stillCompilingNote(
  cases.map((name) => ({ name, ...results.get(name) })),
  'response',
);

const bare = results.get('bare 503');
const rows = cases.map((kind) => {
  const { total, gc, compiler } = results.get(kind);
  return {
    kind,
    instructionsPerResponse: Math.round(total),
    ratio: total / bare.total,
    collectorPerResponse: Math.round(gc),
    compilerPerResponse: Math.round(compiler),
    withoutCollector: Math.round(total - gc),
    withoutCollectorRatio: (total - gc) / (bare.total - bare.gc),
  };
});
if (values.json) {
  console.log(JSON.stringify({ node: process.version, requests, warmup, rows, notWarm }, null, 2));
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
  if (notWarm !== '') console.log(`\n${notWarm}`);
}
