#!/usr/bin/env node
// Where a Redis lease cycle's CPU goes (BENCHMARKS.md, S7; issue 29): acquire + release with 64
// callers on 10,000 keys, Spillway's redisConcurrencyLimit beside redis-semaphore, interleaved
// round by round. For each: cycles a second, and the CPU a cycle costs this process
// (process.cpuUsage) and the Redis server (its /proc stat, so the Redis must run on this machine).
// CPU time is what steal on a shared VM does not inflate, where cycles a second are noisy.
// Add --commands to print INFO commandstats after one round of each (Redis's own time per
// command: what a script's redis.call costs; the whole server's, so run it with nothing else on
// that Redis). --dist DIR measures another build.
// Usage: node bench/diagnostics/redis-lease-cpu.js [--rounds 3] [--seconds 2] [--port 6379]
//          [--dist DIR] [--commands]
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { processCpuUs } from '../lib/proc-cpu.js';
import { deleteKeys, leaseContenders, leaseCycle } from '../lib/redis-leases.js';
import { median } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '2' },
    port: { type: 'string', default: '6379' },
    dist: { type: 'string', default: new URL('../../dist', import.meta.url).pathname },
    commands: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const ms = Number(values.seconds) * 1000;
const port = Number(values.port);

const client = new Redis({
  port,
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
});
await client.connect();
const pid = Number(((await client.info('server')).match(/process_id:(\d+)/) ?? [])[1]);
/** The Redis server's CPU time so far in µs. */
const redisCpuUs = () => processCpuUs(pid);
try {
  redisCpuUs();
} catch {
  throw new Error(`the Redis on port ${port} (pid ${pid}) is not a process of this machine`);
}

const prefix = `spillway-bench:lease-cpu:${randomBytes(3).toString('hex')}`;
const redis = await import(pathToFileURL(resolve(values.dist, 'redis/index.js')).href);
const contenders = Object.fromEntries(
  leaseContenders.map((name) => [
    name,
    leaseCycle(name, { client, prefix: `${prefix}:${name}`, redis }),
  ]),
);
const ids = Array.from({ length: 10_000 }, (_, i) => `client-${i}`);

async function round(cycle) {
  let n = 0;
  let i = 0;
  const stopAt = performance.now() + ms;
  const node0 = process.cpuUsage();
  const redis0 = redisCpuUs();
  const t0 = performance.now();
  const caller = async () => {
    while (performance.now() < stopAt) {
      await cycle(ids[(i++ * 7919) % ids.length]);
      n++;
    }
  };
  await Promise.all(Array.from({ length: 64 }, caller));
  const elapsed = performance.now() - t0;
  const node = process.cpuUsage(node0);
  return {
    perSec: (n / elapsed) * 1000,
    nodeUs: (node.user + node.system) / n,
    redisUs: (redisCpuUs() - redis0) / n,
  };
}

const results = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (const cycle of Object.values(contenders)) await round(cycle); // warm-up
for (let r = 0; r < rounds; r++) {
  const names = Object.keys(contenders);
  for (const name of r % 2 === 0 ? names : names.reverse()) {
    if (values.commands && r === 0) await client.config('RESETSTAT');
    results[name].push(await round(contenders[name]));
    if (values.commands && r === 0) {
      console.log(`INFO commandstats after ${name}:`);
      for (const line of (await client.info('commandstats')).split('\r\n').slice(1)) {
        if (line !== '') console.log(`  ${line.split(',').slice(0, 3).join(',')}`);
      }
    }
  }
}
console.log(`Lease cycles (acquire + release), 64 in flight, ${rounds} rounds of ${ms / 1000} s`);
for (const [name, xs] of Object.entries(results)) {
  const m = (f) => median(xs.map(f));
  console.log(
    `  ${name.padEnd(16)} ${Math.round(m((x) => x.perSec))
      .toLocaleString('en')
      .padStart(7)}/s` +
      `  CPU a cycle: this process ${m((x) => x.nodeUs).toFixed(1)} µs, Redis ${m((x) => x.redisUs).toFixed(1)} µs`,
  );
}
await deleteKeys(client, prefix);
client.disconnect();
