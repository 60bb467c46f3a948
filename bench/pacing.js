#!/usr/bin/env node
// Pacing that waits (issue 24): what `take()` costs when a token is there, against `tryTake()`
// in the same run (interleaved rounds, ratio per round: bench/lib/micro.js), and whether a
// waiting line holds the configured rate on the real clock, with waiters served in order.
// Usage: node bench/pacing.js [--dist dist] [--rounds 15] [--seconds 10] [--rate 10000]
//        [--burst 100] [--workers 200] [--json]
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { runGroup, table } from './lib/micro.js';

const { values } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    rounds: { type: 'string', default: '15' },
    seconds: { type: 'string', default: '10' },
    rate: { type: 'string', default: '10000' },
    burst: { type: 'string', default: '100' },
    workers: { type: 'string', default: '200' },
    json: { type: 'boolean', default: false },
  },
});
const { tokenBucket, creditGate } = await import(
  pathToFileURL(resolve(values.dist, 'index.js')).href
);

const huge = 2 ** 31;
/** A bucket that always has a token: the decision alone, refill arithmetic included. */
const roomy = () => tokenBucket({ ratePerSec: 1e9, burst: huge });

/** @type {import('./lib/micro.js').Group[]} */
const groups = [
  {
    name: 'take() with a token there, against tryTake() (called, not awaited)',
    note: 'Both calls only: `take()` returns an already-settled promise without allocating one.',
    cases: [
      {
        name: 'tokenBucket.tryTake()',
        kind: 'sync',
        make: () =>
          (
            (b) => () =>
              b.tryTake().ok
          )(roomy()),
      },
      {
        name: 'tokenBucket.take()',
        kind: 'sync',
        make: () =>
          (
            (b) => () =>
              b.take()
          )(roomy()),
      },
      {
        name: 'tokenBucket.take({ maxWaitMs, signal })',
        kind: 'sync',
        make: () => {
          const b = roomy();
          const options = { maxWaitMs: 50, signal: new AbortController().signal };
          return () => b.take(options);
        },
      },
    ],
  },
  {
    name: 'await take() with a token there, against await tryTake()',
    note: 'As a caller writes it: each row pays one `await`.',
    cases: [
      {
        name: 'await tokenBucket.tryTake()',
        kind: 'async',
        make: () =>
          (
            (b) => () =>
              b.tryTake().ok
          )(roomy()),
      },
      {
        name: 'await tokenBucket.take()',
        kind: 'async',
        make: () =>
          (
            (b) => () =>
              b.take()
          )(roomy()),
      },
      {
        name: 'await creditGate.send() (credit there)',
        kind: 'async',
        make: () => {
          const g = creditGate({ maxCredit: huge, initialCredit: huge });
          return () => {
            if (g.credit < 1_000) g.request(huge);
            return g.send();
          };
        },
      },
    ],
  },
];

/**
 * `workers` callers loop on `await take()` against one bucket on the real clock for `seconds`.
 * Each take carries its arrival number; grants must come in arrival order.
 */
async function pace({ ratePerSec, burst, workers, seconds }) {
  const bucket = tokenBucket({ ratePerSec, burst, maxWaiting: workers });
  let arrivals = 0;
  let lastGranted = -1;
  let outOfOrder = 0;
  let granted = 0;
  let stop = false;
  const t0 = performance.now();
  const worker = async () => {
    while (!stop) {
      const seq = arrivals++;
      await bucket.take();
      if (seq < lastGranted) outOfOrder++;
      lastGranted = seq;
      granted++;
    }
  };
  const deadline = setTimeout(() => (stop = true), seconds * 1000);
  await Promise.all(Array.from({ length: workers }, worker));
  clearTimeout(deadline);
  const elapsedS = (performance.now() - t0) / 1000;
  // The bucket starts full: the first `burst` grants are the burst, not the rate.
  const rate = (granted - burst) / elapsedS;
  return {
    ratePerSec,
    burst,
    workers,
    elapsedS,
    granted,
    rate,
    errorPct: (100 * (rate - ratePerSec)) / ratePerSec,
    outOfOrder,
  };
}

const machine = `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Node ${process.version}`;
const micro = [];
const out = [
  `Machine: ${machine}. Rounds: ${values.rounds}, interleaved. Build: ${values.dist}.`,
  '',
];
for (const group of groups) {
  const results = await runGroup(group, {
    rounds: Number(values.rounds),
    onProgress: (r, n) => process.stderr.write(`\r${group.name}: round ${r}/${n}   `),
  });
  process.stderr.write('\n');
  micro.push({ group: group.name, results });
  out.push(table(group, results), '');
}
process.stderr.write(`pacing on the real clock for ${values.seconds} s…\n`);
const paced = await pace({
  ratePerSec: Number(values.rate),
  burst: Number(values.burst),
  workers: Number(values.workers),
  seconds: Number(values.seconds),
});
out.push(
  '### Pacing on the real clock',
  '',
  `${paced.workers} callers looping on \`await take()\`, ratePerSec ${paced.ratePerSec}, burst ${paced.burst}: ` +
    `${paced.granted} grants in ${paced.elapsedS.toFixed(3)} s → ${paced.rate.toFixed(1)}/s after the burst ` +
    `(${paced.errorPct >= 0 ? '+' : ''}${paced.errorPct.toFixed(3)} %), grants out of arrival order: ${paced.outOfOrder}.`,
);
if (values.json) console.log(JSON.stringify({ machine, micro, paced }, null, 2));
else console.log(out.join('\n'));
