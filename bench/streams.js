#!/usr/bin/env node
// Backpressure in streams and async iterables (issue 24, items 3 and 5), three parts:
//  export      the seed's experiment: 1,000,000 rows to a file stream written three ways —
//              ignoring write()'s return value, awaiting 'drain' by hand, writeAll — each in a
//              fresh process; peak writableLength (read after every write) and peak RSS
//              (sampled every 1,000 rows, and every 5 ms while the loop yields).
//  throughput  boundedMap on a no-op async fn beside p-map (pMap and pMapIterable) and
//              p-limit, the same items at the same concurrency, interleaved round by round in
//              one process; items/s and each round's time over boundedMap's (BENCHMARKS.md
//              rule 4: ratios in one run).
//  memory      boundedMap over 1,000,000 items when the consumer is 10x slower than the
//              source: RSS growth from the 10,000th item to the peak, in a fresh process.
// Reads Spillway from dist/ unless --dist names another build (a private one, say).
// Usage: node bench/streams.js [--part export|throughput|memory] [--dist DIR] [--rows N]
//                              [--rounds N] [--json]
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pLimit from 'p-limit';
import pMap, { pMapIterable } from 'p-map';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    part: { type: 'string', default: '' },
    dist: { type: 'string', default: fileURLToPath(new URL('../dist', import.meta.url)) },
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '11' },
    json: { type: 'boolean', default: false },
    // Internal: the part a child process runs, and the consumer calibrated for the memory part.
    child: { type: 'string', default: '' },
    consumer: { type: 'string', default: '' },
  },
});
const rows = Number(values.rows);
const stream = await import(pathToFileURL(resolve(values.dist, 'stream/index.js')).href);
const MiB = 1024 * 1024;
const mib = (bytes) => (bytes / MiB).toFixed(1);

// ---- export: one way per child process -----------------------------------------------------

/** The seed's rows: a CSV line each, about 40 bytes. */
function* csvRows(n) {
  for (let i = 0; i < n; i++) yield `${i},customer-${i % 9973},${(i * 7919) % 100_000}.00\n`;
}

const exportWays = {
  'ignore write() (naive)': async (out, n, probe) => {
    for (const row of csvRows(n)) probe(out.write(row));
  },
  'await drain by hand': async (out, n, probe) => {
    for (const row of csvRows(n)) if (!probe(out.write(row))) await once(out, 'drain');
  },
  writeAll: async (out, n, probe) => {
    // writeAll calls out.write; the probe wraps it to read writableLength after each call.
    const write = out.write.bind(out);
    out.write = (chunk) => probe(write(chunk));
    await stream.writeAll(out, csvRows(n));
  },
};

async function exportChild(way) {
  const dir = mkdtempSync(join(tmpdir(), 'spillway-bench-export-'));
  const file = join(dir, 'rows.csv');
  const out = createWriteStream(file);
  let peakBuffered = 0;
  let peakRss = process.memoryUsage.rss();
  const startRss = peakRss;
  let writes = 0;
  const probe = (ok) => {
    if (out.writableLength > peakBuffered) peakBuffered = out.writableLength;
    if (++writes % 1_000 === 0) peakRss = Math.max(peakRss, process.memoryUsage.rss());
    return ok;
  };
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 5);
  const t0 = process.hrtime.bigint();
  await exportWays[way](out, rows, probe);
  if (!out.writableEnded) {
    out.end();
    await once(out, 'close');
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
  const bytes = statSync(file).size;
  rmSync(dir, { recursive: true, force: true });
  return {
    way,
    highWaterMark: out.writableHighWaterMark,
    peakBufferedBytes: peakBuffered,
    startRssBytes: startRss,
    peakRssBytes: peakRss,
    fileBytes: bytes,
    ms,
  };
}

// ---- memory: consumer 10x slower than the source --------------------------------------------

/** Pretend work: `units` rounds of integer hashing. */
function work(units, seed) {
  let h = seed | 0;
  for (let i = 0; i < units; i++) h = Math.imul(h ^ i, 0x5bd1e995) >>> 0;
  return h;
}

/** The source: a fresh object with a string per item (what would pile up if items were kept). */
async function* itemSource(n) {
  for (let i = 0; i < n; i++) yield { id: i, payload: `item-${i}-${'x'.repeat(48)}` };
}

const nsSince = (t0) => Number(process.hrtime.bigint() - t0);

/**
 * A consumer about 10x slower per item than the source alone: it yields to the event loop
 * every `every` items (so the source can run ahead, if anything lets it) and does `units` of
 * work per item. Calibrated here, on this machine, from the source's own pace.
 */
async function calibrateConsumer() {
  const n = 100_000;
  const items = Array.from({ length: n }, (_, i) => ({ id: i }));
  const timeConsumer = async (consumer) => {
    const t0 = process.hrtime.bigint();
    await consume(items, consumer, () => undefined);
    return nsSince(t0) / n;
  };
  let sourceNs = Infinity;
  for (let round = 0; round < 3; round++) {
    // Best of three, once warm: the source's own pace.
    const t0 = process.hrtime.bigint();
    for await (const _ of itemSource(n));
    sourceNs = Math.min(sourceNs, nsSince(t0) / n);
  }
  await timeConsumer({ every: 1, units: 0 });
  const tickNs = await timeConsumer({ every: 1, units: 0 });
  const every = Math.max(1, Math.ceil(tickNs / (5 * sourceNs)));
  // Then as much work per item as brings the consumer to 10x the source, in a few steps.
  let consumer = { every, units: 0 };
  let consumerNs = await timeConsumer(consumer);
  for (let step = 0; step < 6 && Math.abs(consumerNs / sourceNs - 10) > 0.5; step++) {
    const unitNs = consumer.units === 0 ? 1 : (consumerNs - tickNs / every) / consumer.units;
    const units = Math.round((10 * sourceNs - tickNs / every) / Math.max(unitNs, 0.1));
    consumer = { every, units: Math.max(0, units) };
    consumerNs = await timeConsumer(consumer);
  }
  return { ...consumer, sourceNs, consumerNs };
}

async function consume(iterable, { every, units }, onItem) {
  let sink = 0;
  let n = 0;
  for await (const item of iterable) {
    sink ^= work(units, item.id);
    if (++n % every === 0) await new Promise(setImmediate);
    onItem(n);
  }
  return sink;
}

async function memoryChild(kind) {
  const consumer = JSON.parse(values.consumer);
  globalThis.gc();
  const options = { concurrency: 8, maxBuffered: 64 };
  const source = itemSource(rows);
  const iterable = kind === 'direct' ? source : stream.boundedMap(source, async (x) => x, options);
  let baseline = 0;
  let warmBaseline = 0;
  let peak = 0;
  let maxHeld = 0;
  const retained = [];
  const t0 = process.hrtime.bigint();
  await consume(iterable, consumer, (n) => {
    if (n % 10_000 !== 0) return;
    const rss = process.memoryUsage.rss();
    if (n === 10_000) baseline = rss;
    if (n === 100_000) warmBaseline = rss;
    peak = Math.max(peak, rss);
    if (kind !== 'direct') maxHeld = Math.max(maxHeld, iterable.active + iterable.buffered);
    if (n % 100_000 === 0) {
      globalThis.gc();
      retained.push(process.memoryUsage().heapUsed);
    }
  });
  return {
    kind,
    items: rows,
    ...(kind === 'direct' ? {} : options),
    consumer,
    baselineRssBytes: baseline,
    peakRssBytes: peak,
    growthBytes: peak - baseline,
    warmBaselineRssBytes: warmBaseline,
    warmGrowthBytes: peak - warmBaseline,
    maxHeldSampled: maxHeld,
    heapAfterGcMiB: retained.map((b) => Number((b / MiB).toFixed(1))),
    ms: nsSince(t0) / 1e6,
  };
}

// ---- throughput: interleaved rounds in this process ----------------------------------------

const noop = async (x) => x;
const concurrency = 8;

const throughputCases = [
  {
    name: 'spillway boundedMap, ordered (for await)',
    run: async (items) => {
      let n = 0;
      for await (const _ of stream.boundedMap(items, noop, { concurrency, maxBuffered: 16 })) n++;
      return n;
    },
  },
  {
    name: 'spillway boundedMap, unordered (for await)',
    run: async (items) => {
      let n = 0;
      const options = { concurrency, maxBuffered: 16, ordered: false };
      for await (const _ of stream.boundedMap(items, noop, options)) n++;
      return n;
    },
  },
  {
    name: 'p-map 7 pMapIterable (for await, backpressure 24)',
    peer: true,
    run: async (items) => {
      let n = 0;
      for await (const _ of pMapIterable(items, noop, { concurrency, backpressure: 24 })) n++;
      return n;
    },
  },
  {
    name: 'p-map 7 pMap (all results in an array)',
    peer: true,
    run: async (items) => (await pMap(items, noop, { concurrency })).length,
  },
  {
    name: 'p-limit 7 Promise.all(items.map(limit(fn)))',
    peer: true,
    run: async (items) => {
      const limit = pLimit(concurrency);
      return (await Promise.all(items.map((x) => limit(noop, x)))).length;
    },
  },
];

function shuffle(array) {
  for (let i = array.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [array[i], array[j]] = [array[j], array[i]];
  }
  return array;
}

async function throughput() {
  const n = Math.min(rows, 200_000);
  const items = Array.from({ length: n }, (_, i) => i);
  for (const c of throughputCases) {
    // Warm-up, and a check that each case maps every item.
    if ((await c.run(items)) !== n) throw new Error(`${c.name} lost items`);
  }
  const rounds = Number(values.rounds);
  const samples = throughputCases.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (const k of shuffle([...throughputCases.keys()])) {
      const t0 = process.hrtime.bigint();
      await throughputCases[k].run(items);
      samples[k].push(Number(process.hrtime.bigint() - t0) / n); // ns per item
    }
  }
  return throughputCases.map((c, k) => ({
    name: c.name,
    peer: c.peer === true,
    nsPerItem: median(samples[k]),
    itemsPerSec: 1e9 / median(samples[k]),
    // Each round's time over boundedMap's (ordered) in the same round.
    timeVsFirst: median(samples[k].map((x, r) => x / samples[0][r])),
  }));
}

// ---- driver ---------------------------------------------------------------------------------

function inChild(part, consumer, v8Flags = []) {
  const child = fork(
    fileURLToPath(import.meta.url),
    [
      ...['--child', part, '--dist', values.dist, '--rows', String(rows)],
      ...(consumer === undefined ? [] : ['--consumer', JSON.stringify(consumer)]),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--expose-gc', ...v8Flags] },
  );
  return new Promise((resolvePromise, reject) => {
    child.once('message', resolvePromise);
    child.once('exit', (code) => code !== 0 && reject(new Error(`${part} child exited ${code}`)));
  });
}

if (values.child !== '') {
  const [part, way] = values.child.split(':');
  const result =
    part === 'export'
      ? await exportChild(way)
      : way === 'calibrate'
        ? await calibrateConsumer()
        : await memoryChild(way);
  process.send(result, () => process.exit(0));
} else {
  const parts = values.part === '' ? ['export', 'throughput', 'memory'] : [values.part];
  const report = {};
  if (parts.includes('export')) {
    report.export = [];
    for (const way of Object.keys(exportWays)) {
      report.export.push(await inChild(`export:${way}`));
    }
    if (!values.json) {
      console.log(`\n### Export of ${rows.toLocaleString('en')} rows to a file stream\n`);
      console.log('| way | peak writableLength | peak RSS (start) | file | time |');
      console.log('|---|---:|---:|---:|---:|');
      for (const r of report.export) {
        console.log(
          `| ${r.way} | ${(r.peakBufferedBytes / 1024).toFixed(1)} KiB (hwm ${r.highWaterMark / 1024} KiB) | ${mib(r.peakRssBytes)} MiB (${mib(r.startRssBytes)}) | ${mib(r.fileBytes)} MiB | ${(r.ms / 1000).toFixed(2)} s |`,
        );
      }
    }
  }
  if (parts.includes('throughput')) {
    report.throughput = await throughput();
    if (!values.json) {
      console.log(`\n### boundedMap throughput, no-op async fn, concurrency ${concurrency}\n`);
      console.log('| case | ns/item (median) | items/s | time × boundedMap, per round |');
      console.log('|---|---:|---:|---:|');
      for (const r of report.throughput) {
        console.log(
          `| ${r.name} | ${r.nsPerItem.toFixed(1)} | ${Math.round(r.itemsPerSec).toLocaleString('en')} | ${r.timeVsFirst.toFixed(2)} |`,
        );
      }
    }
  }
  if (parts.includes('memory')) {
    // One calibration, in a process of its own, for both cases.
    const c = await inChild('memory:calibrate');
    // V8 grows its young generation (up to 16 MiB a semi-space) as allocation goes on, which
    // raises RSS by some 20 MiB whatever holds the items; a 1 MiB semi-space takes that out.
    report.memory = [];
    for (const flags of [[], ['--max-semi-space-size=1']]) {
      for (const kind of ['direct', 'boundedMap']) {
        report.memory.push({ ...(await inChild(`memory:${kind}`, c, flags)), v8Flags: flags });
      }
    }
    if (!values.json) {
      console.log(`\n### Memory with a consumer 10× slower than the source\n`);
      console.log(
        `Source alone ${c.sourceNs.toFixed(0)} ns/item; consumer alone ${c.consumerNs.toFixed(0)} ns/item ` +
          `(${(c.consumerNs / c.sourceNs).toFixed(1)}×: yields every ${c.every} items, ${c.units} units of work each). ` +
          `${rows.toLocaleString('en')} items; RSS growth to the peak from item 10,000, and from item 100,000 once V8's heap has grown to its working size (target ≤ 16 MB); ` +
          `heap after a full GC every 100,000 items (what is retained).\n`,
      );
      console.log(
        '| case | RSS at 10,000 | at 100,000 | peak RSS | growth from 10,000 | from 100,000 | heap after GC (MiB) | items held (sampled max) | time |',
      );
      console.log('|---|---:|---:|---:|---:|---:|---|---:|---:|');
      for (const m of report.memory) {
        const name =
          (m.kind === 'direct'
            ? 'source consumed directly (reference)'
            : `boundedMap (concurrency ${m.concurrency}, maxBuffered ${m.maxBuffered})`) +
          (m.v8Flags.length === 0 ? '' : `, ${m.v8Flags.join(' ')}`);
        console.log(
          `| ${name} | ${mib(m.baselineRssBytes)} MiB | ${mib(m.warmBaselineRssBytes)} MiB | ${mib(m.peakRssBytes)} MiB | +${mib(m.growthBytes)} MiB | +${mib(m.warmGrowthBytes)} MiB | ${m.heapAfterGcMiB.join(', ')} | ${m.kind === 'direct' ? '–' : m.maxHeldSampled} | ${(m.ms / 1000).toFixed(1)} s |`,
        );
      }
    }
  }
  if (values.json) console.log(JSON.stringify(report, null, 2));
}
