#!/usr/bin/env node
// `npm run bench`: decision overhead of Spillway's core primitives against the peers users
// would pick instead, measured side by side in one process (BENCHMARKS.md S8, micro part).
// Usage: node bench/core.js [--rounds N] [--json] [--group substring]
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { bulkhead } from 'cockatiel';
import { Sema } from 'async-sema';
import pLimit from 'p-limit';
import PQueue from 'p-queue';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import Bottleneck from 'bottleneck';
import { TokenBucket as LimiterTokenBucket } from 'limiter';
import {
  aimdLimit,
  concurrencyLimit,
  gradientLimit,
  keyedTokenBuckets,
  tokenBucket,
  vegasLimit,
} from '../dist/index.js';
import { runGroup, table } from './lib/micro.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    json: { type: 'boolean', default: false },
    group: { type: 'string', default: '' },
  },
});
const rounds = Number(values.rounds);

/** A clock that never moves: isolates the decision from the cost of reading time. */
const frozenClock = {
  now: () => 0,
  wallNow: () => 0,
  setTimer: () => ({}),
  clearTimer: () => undefined,
  sleep: () => Promise.resolve(),
  timeoutSignal: () => new AbortController().signal,
};
const huge = 2 ** 31;
const perf = globalThis.performance;
const noop = () => undefined;
const keys = Array.from({ length: 10_000 }, (_, i) => `client-${i}`);
// RTTs an adaptive limit is fed: 64 values between 10 and 40 ms, so windows have a spread.
const rtts = Array.from({ length: 64 }, (_, i) => 10 + ((i * 37) % 64) * 0.47);

/** A case feeding one sample per call to an adaptive limit. */
function sampleCase(name, make) {
  return {
    name,
    kind: 'sync',
    make: () => {
      const limit = make();
      let i = 0;
      return () => {
        limit.onSample({ rttMs: rtts[(i = (i + 1) & 63)], inflight: 30, dropped: false });
        return true;
      };
    },
  };
}

/** @type {import('./lib/micro.js').Group[]} */
const groups = [
  {
    name: 'Reading the clock (reference)',
    note: 'What one `performance.now()` costs on this machine; every real decision pays it once.',
    cases: [{ name: 'performance.now()', kind: 'sync', make: () => () => perf.now() }],
  },
  {
    name: 'Token bucket decision (one key)',
    note: 'Bucket sized so every take is admitted; the decision includes the refill arithmetic.',
    cases: [
      {
        name: 'spillway tokenBucket.tryTake()',
        kind: 'sync',
        make: () => {
          const b = tokenBucket({ ratePerSec: 1e9, burst: huge });
          return () => b.tryTake().ok;
        },
      },
      {
        name: 'spillway tokenBucket.tryTake(), frozen clock',
        kind: 'sync',
        make: () => {
          const b = tokenBucket({ ratePerSec: 1e9, burst: huge, clock: frozenClock });
          return () => b.tryTake().ok;
        },
      },
      {
        name: 'limiter 3 TokenBucket.tryRemoveTokens(1)',
        peer: true,
        kind: 'sync',
        make: () => {
          const b = new LimiterTokenBucket({
            bucketSize: huge,
            tokensPerInterval: 1e9,
            interval: 'second',
          });
          return () => b.tryRemoveTokens(1);
        },
      },
      {
        name: 'rate-limiter-flexible 11 RateLimiterMemory.consume()',
        peer: true,
        kind: 'async',
        make: () => {
          const l = new RateLimiterMemory({ points: huge, duration: 1 });
          return () => l.consume('k');
        },
      },
    ],
  },
  {
    name: 'Uncontended acquire + release',
    note: 'A free slot every time (limit 10, one caller). Async rows include one `await`.',
    cases: [
      {
        name: 'spillway tryAcquire() + release()',
        kind: 'sync',
        make: () => {
          const l = concurrencyLimit({ limit: 10 });
          return () => {
            const r = l.tryAcquire();
            if (r.ok) r.permit.release();
            return r.ok;
          };
        },
      },
      {
        name: 'spillway await acquire() + release()',
        kind: 'async',
        make: () => {
          const l = concurrencyLimit({ limit: 10 });
          return async () => {
            const r = await l.acquire();
            if (r.ok) r.permit.release();
          };
        },
      },
      {
        name: 'spillway run(fn)',
        kind: 'async',
        make: () => {
          const l = concurrencyLimit({ limit: 10 });
          return () => l.run(noop);
        },
      },
      {
        name: 'cockatiel 3 bulkhead(10).execute(fn)',
        peer: true,
        kind: 'async',
        make: () => {
          const b = bulkhead(10);
          return () => b.execute(noop);
        },
      },
      {
        name: 'async-sema 3 acquire() + release()',
        peer: true,
        kind: 'async',
        make: () => {
          const s = new Sema(10);
          return async () => {
            await s.acquire();
            s.release();
          };
        },
      },
      {
        name: 'p-limit 7 limit(fn)',
        peer: true,
        kind: 'async',
        make: () => {
          const l = pLimit(10);
          return () => l(noop);
        },
      },
      {
        name: 'p-queue 9 add(fn)',
        peer: true,
        kind: 'async',
        make: () => {
          const q = new PQueue({ concurrency: 10 });
          return () => q.add(noop);
        },
      },
      {
        name: 'bottleneck 2 schedule(fn)',
        peer: true,
        kind: 'async',
        make: () => {
          const b = new Bottleneck({ maxConcurrent: 10 });
          return () => b.schedule(() => Promise.resolve());
        },
      },
    ],
  },
  {
    name: 'Keyed rate decision, 10,000 live keys',
    note: 'Keys visited round-robin, so every decision is an LRU hit on a different key.',
    cases: [
      {
        name: 'spillway keyedTokenBuckets.tryTake(key)',
        kind: 'sync',
        make: () => {
          const k = keyedTokenBuckets({ ratePerSec: 1e9, burst: huge, maxKeys: 10_000 });
          let i = 0;
          return () => k.tryTake(keys[(i = (i + 1) % 10_000)]).ok;
        },
      },
      {
        name: 'spillway keyedTokenBuckets.tryTake(key), frozen clock',
        kind: 'sync',
        make: () => {
          const k = keyedTokenBuckets({
            ratePerSec: 1e9,
            burst: huge,
            maxKeys: 10_000,
            clock: frozenClock,
          });
          let i = 0;
          return () => k.tryTake(keys[(i = (i + 1) % 10_000)]).ok;
        },
      },
      {
        name: 'spillway keyedTokenBuckets.tryTake(key), awaited',
        kind: 'async',
        make: () => {
          const k = keyedTokenBuckets({ ratePerSec: 1e9, burst: huge, maxKeys: 10_000 });
          let i = 0;
          return async () => (await k.tryTake(keys[(i = (i + 1) % 10_000)])).ok;
        },
      },
      {
        name: 'rate-limiter-flexible 11 RateLimiterMemory.consume(key)',
        peer: true,
        kind: 'async',
        make: () => {
          const l = new RateLimiterMemory({ points: huge, duration: 60 });
          let i = 0;
          return () => l.consume(keys[(i = (i + 1) % 10_000)]);
        },
      },
    ],
  },
  {
    name: 'Adaptive limit: cost of onSample',
    note: 'One sample per call, RTTs cycling through 64 values, default 1 s windows on the system clock: the cost includes the clock reads (every sample for the first 512 of a window, then every 8th) and the amortised window close (a sort of at most 512 RTTs). Target: ≤ 100 ns. No peer does this in JavaScript.',
    cases: [
      sampleCase('spillway gradientLimit().onSample()', () => gradientLimit()),
      sampleCase('spillway vegasLimit().onSample()', () => vegasLimit()),
      sampleCase('spillway aimdLimit().onSample()', () => aimdLimit()),
      sampleCase('spillway gradientLimit().onSample(), frozen clock', () =>
        gradientLimit({ clock: frozenClock }),
      ),
      {
        name: 'spillway tryAcquire() + release() feeding gradientLimit()',
        kind: 'sync',
        make: () => {
          const l = concurrencyLimit({ limit: gradientLimit({ initialLimit: 100 }) });
          return () => {
            const r = l.tryAcquire();
            if (r.ok) r.permit.release();
            return r.ok;
          };
        },
      },
    ],
  },
];

const machine = `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Node ${process.version}`;
const all = [];
const out = [
  `Machine: ${machine}. Rounds: ${rounds}, interleaved. Command: \`npm run bench\`.`,
  '',
];
for (const group of groups.filter((g) => g.name.includes(values.group))) {
  const results = await runGroup(group, {
    rounds,
    onProgress: (r, n) => process.stderr.write(`\r${group.name}: round ${r}/${n}   `),
  });
  process.stderr.write('\n');
  all.push({ group: group.name, results });
  out.push(table(group, results), '');
}
if (values.json) console.log(JSON.stringify({ machine, groups: all }, null, 2));
else console.log(out.join('\n'));
