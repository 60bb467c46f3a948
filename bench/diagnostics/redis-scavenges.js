#!/usr/bin/env node
// A diagnostic of S7's latency target (a decision's p99 at half RateLimiterRedis's rate; the
// verdict is bench/redis.js): what the young-generation collections cost the store under that
// open loop. Each client runs in a process of its own under V8's --trace-gc-nvp, which prints,
// for every scavenge, the bytes allocated since the one before, the bytes that survived it and
// its pause. A scavenge copies what survives, so its pause grows with that; at tens of
// thousands of decisions a second a pause of a few ms lands in the p99. Only the scavenges of
// the counted seconds are read (after one second of the same loop, not counted).
//
// Clients: `inprocess` answers every script in-process on the next turn of the event loop (no
// socket, no Redis client library: what Spillway's own code keeps alive), `ioredis` and
// `node-redis` talk to the Redis on 127.0.0.1:<port>; `ioredis-young-reject` is ioredis with
// its commands' `reject` made as ./ioredis-young-reject.js does (an experiment: what one line
// of ioredis costs while its code runs below TurboFan); `node-redis-5s-timeout` is node-redis
// with its own per-command timeout left on (what the store turns off for its calls: a 5 s
// timer and signal per command, promoted). Node 24 and 25 are where ioredis's line
// matters (the JSON lines Node 25 prints are read too); V8 flags given to this script reach
// the measured processes (`--no-maglev`):
//   npx -y node@24 bench/diagnostics/redis-scavenges.js
// Usage: npm run build && node bench/diagnostics/redis-scavenges.js --help
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { scavengeOf } from '../lib/gc-trace.js';
import { deleteKeys } from '../lib/redis-leases.js';
import { median } from '../lib/stats.js';

const clients = [
  'inprocess',
  'ioredis',
  'ioredis-young-reject',
  'node-redis',
  'node-redis-5s-timeout',
];
const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: clients.join(',') },
    rate: { type: 'string', default: '34000' },
    seconds: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '1' },
    'max-batch-items': { type: 'string', default: '16' },
    port: { type: 'string', default: '6379' },
    dist: { type: 'string', default: fileURLToPath(new URL('../../dist', import.meta.url)) },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
    // Internal: the measured process runs this client.
    child: { type: 'string' },
  },
});
if (values.help) {
  console.log(`Usage: npm run build && node bench/diagnostics/redis-scavenges.js [options]

Scavenges under S7's open loop, one process per client, from V8's --trace-gc-nvp: bytes
allocated and surviving per scavenge, and its pause, beside the decisions' p99.

  --clients a,b         of ${clients.join(', ')} (default: all)
  --rate N              decisions a second, open loop (default 34000: about half of
                        RateLimiterRedis's rate on a 2-core VM)
  --seconds S           counted seconds (default 4)
  --warmup S            seconds of the same loop before them, not counted (default 1: on
                        Node 24 and 25 the counted seconds then fall in the first seconds,
                        where ioredis's commands run below TurboFan; 10 counts after them)
  --max-batch-items N   the store's maxBatchItems (default 16)
  --port P              the Redis on 127.0.0.1 (default 6379; keys under spillway-bench:*)
  --dist DIR            measure another build of Spillway (e.g. a copy of dist/ made before a
                        change)
  --json                machine-readable output

Run it with the Node to look at: npx -y node@24 bench/diagnostics/redis-scavenges.js`);
  process.exit(0);
}

function positive(name, text) {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`${name} must be a positive number, not ${text}`);
  return n;
}
const rate = positive('--rate', values.rate);
const seconds = positive('--seconds', values.seconds);
const warmup = positive('--warmup', values.warmup);
const port = positive('--port', values.port);

if (values.child !== undefined) {
  const { redisStore } = await import(pathToFileURL(resolve(values.dist, 'redis/index.js')).href);
  const { client, close } = await connect(values.child);
  const prefix = `spillway-bench:scavenges:${randomBytes(3).toString('hex')}`;
  const store = redisStore({
    client,
    prefix,
    onError: 'closed',
    timeoutMs: 1_000,
    maxBatchItems: positive('--max-batch-items', values['max-batch-items']),
  });
  const policy = { name: 'wide', ratePerSec: 1e6, burst: 1e6 }; // never refuses
  const keys = Array.from({ length: 10_000 }, (_, i) => `client-${i}`);
  const decide = (i) => store.take(keys[(i * 7919) % keys.length], 1, policy);
  await openLoop(decide, warmup * 1_000);
  process.stdout.write('\nspillway-scavenges: start\n');
  const r = await openLoop(decide, seconds * 1_000);
  process.stdout.write(`\nspillway-scavenges: end ${JSON.stringify(r)}\n`);
  await close(prefix);
  process.exit(0);
}

/** S7's open loop (bench/redis.js): the decisions due each millisecond, then a 1 ms sleep. */
async function openLoop(decide, ms) {
  const lat = new Float64Array(Math.ceil((rate * ms) / 1000) + 1);
  let done = 0;
  let issued = 0;
  let outstanding = 0;
  const record = (t) => () => {
    lat[done++] = performance.now() - t;
    outstanding--;
  };
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    const due = Math.min(lat.length, Math.floor(((performance.now() - t0) * rate) / 1000));
    for (; issued < due; issued++) {
      outstanding++;
      decide(issued).then(record(performance.now()));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  while (outstanding > 0) await new Promise((r) => setTimeout(r, 1));
  const sorted = lat.subarray(0, done).sort();
  return { perSec: Math.round((done * 1000) / ms), p99Ms: sorted[Math.floor(0.99 * done)] };
}

/** A client of `kind`, and how to close it once its keys are deleted. */
async function connect(kind) {
  if (kind === 'inprocess') return { client: inProcessClient(), close: async () => {} };
  // ioredis with its commands' `reject` made young: ./ioredis-young-reject.js says why.
  if (kind === 'ioredis-young-reject') await import('./ioredis-young-reject.js');
  const { Redis } = await import('ioredis');
  const io = new Redis({
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  await io.connect();
  const dropKeys = async (prefix) => {
    await deleteKeys(io, prefix);
    io.disconnect();
  };
  if (kind === 'ioredis' || kind === 'ioredis-young-reject') return { client: io, close: dropKeys };
  if (kind === 'node-redis' || kind === 'node-redis-5s-timeout') {
    const { createClient } = await import('redis');
    const c = createClient({ socket: { port }, disableOfflineQueue: true });
    await c.connect();
    // The store sends through withCommandOptions({ timeout: 0 }) (src/redis/script-client.ts);
    // hidden, each command gets node-redis 6's own 5 s AbortSignal.timeout, as before.
    const client =
      kind === 'node-redis'
        ? c
        : {
            evalSha: (...call) => c.evalSha(...call),
            eval: (...call) => c.eval(...call),
            get isReady() {
              return c.isReady;
            },
          };
    return { client, close: async (prefix) => (await dropKeys(prefix), c.destroy()) };
  }
  throw new Error(`--clients: no client ${kind} (one of ${clients.join(', ')})`);
}

/**
 * An ioredis-shaped client that answers every script on the next turn, granting each item
 * (the GCRA script's reply: granted 1, remaining, retry -1, reset 0; then Redis's time in µs).
 */
function inProcessClient() {
  let due = [];
  const answerAll = () => {
    const now = due;
    due = [];
    for (const f of now) f();
  };
  const later = (f) => {
    if (due.length === 0) setImmediate(answerAll);
    due.push(f);
  };
  const reply = (numKeys) => {
    const r = [];
    for (let i = 0; i < numKeys; i++) r.push(1, 999_999, -1, 0);
    r.push(Date.now() * 1000);
    return r;
  };
  const run = (numKeys) => new Promise((settle) => later(() => settle(reply(numKeys))));
  return {
    status: 'ready',
    evalsha: (_sha, numKeys) => run(numKeys),
    eval: (_lua, numKeys) => run(numKeys),
  };
}

// ---- the parent: one child per client, its --trace-gc-nvp lines read ----------------------

function measure(kind) {
  return new Promise((done, fail) => {
    const args = ['--child', kind, '--rate', values.rate, '--seconds', values.seconds];
    args.push('--warmup', values.warmup);
    args.push('--max-batch-items', values['max-batch-items'], '--port', values.port);
    const child = spawn(
      process.execPath,
      [
        ...process.execArgv,
        '--trace-gc-nvp',
        fileURLToPath(import.meta.url),
        ...args,
        '--dist',
        values.dist,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('error', fail);
    child.on('exit', (code) => {
      const start = text.indexOf('spillway-scavenges: start');
      const endAt = text.indexOf('spillway-scavenges: end ');
      if (code !== 0 || start < 0 || endAt < 0) {
        fail(new Error(`${kind}: the measured process exited with ${code}\n${text.slice(-2000)}`));
        return;
      }
      const loop = JSON.parse(text.slice(endAt + 24).split('\n')[0]);
      const scavenges = [];
      for (const line of text.slice(start, endAt).split('\n')) {
        const s = scavengeOf(line);
        if (s !== undefined) scavenges.push(s);
      }
      done({
        client: kind,
        decisionsPerSec: loop.perSec,
        p99Ms: +loop.p99Ms.toFixed(2),
        scavenges: scavenges.length,
        allocatedKB: Math.round(median(scavenges.map((s) => s.allocated)) / 1024),
        survivedKB: Math.round(median(scavenges.map((s) => s.survived)) / 1024),
        survivedPct: +median(scavenges.map((s) => (100 * s.survived) / s.allocated)).toFixed(2),
        pauseMs: +median(scavenges.map((s) => s.pauseMs)).toFixed(1),
        maxPauseMs: +Math.max(...scavenges.map((s) => s.pauseMs)).toFixed(1),
      });
    });
  });
}

const chosen = values.clients.split(',');
for (const kind of chosen) {
  if (!clients.includes(kind)) {
    console.error(`--clients: no client ${kind} (choose from ${clients.join(', ')})`);
    process.exit(2);
  }
}
const rows = [];
for (const kind of chosen) rows.push(await measure(kind));
if (values.json) {
  console.log(JSON.stringify({ node: process.version, rate, seconds, warmup, rows }, null, 2));
} else {
  console.log(
    `Node ${process.version}, ${rate}/s open loop for ${seconds} s after ${warmup} s, maxBatchItems ` +
      `${values['max-batch-items']}; medians over the counted scavenges`,
  );
  console.table(
    rows.map((r) => ({
      client: r.client,
      'decisions/s': r.decisionsPerSec,
      'p99 ms': r.p99Ms,
      scavenges: r.scavenges,
      'allocated KB': r.allocatedKB,
      'survived KB': r.survivedKB,
      'survived %': r.survivedPct,
      'pause ms': r.pauseMs,
      'max pause ms': r.maxPauseMs,
    })),
  );
}
