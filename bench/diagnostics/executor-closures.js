#!/usr/bin/env node
// The behaviour behind S7's Node 24 latency (docs/redis.md, "Node 24 and 25 with ioredis"),
// without ioredis, Redis or Spillway: objects that each keep a closure made inside their
// promise's executor, a few made every millisecond and dropped at once, survive the
// young-generation collections they should die in. Each case runs in a process of its own under
// V8's --trace-gc-nvp for the given seconds:
//   closure  this.resolve = (value) => resolve(value), inside the executor (ioredis's shape)
//   direct   this.resolve = resolve, inside the executor
// Survivors of a scavenge are copied, so what they weigh is what its pause costs. A full
// collection frees them: they are garbage that the scavenges keep. The effect hangs on code
// shape: one class choosing between the two with `closure ? (value) => resolve(value) : resolve`
// showed none, which is why each case is a class of its own.
// Usage: node bench/diagnostics/executor-closures.js [--seconds 4] [--per-ms 3]
//        (and through npx -y node@24, node@22, node@20 to compare runtimes)
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { scavengeOf } from '../lib/gc-trace.js';
import { median } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    'per-ms': { type: 'string', default: '3' },
    help: { type: 'boolean', default: false },
    // Internal: the measured process runs this case.
    child: { type: 'string' },
  },
});
if (values.help) {
  console.log(`Usage: node bench/diagnostics/executor-closures.js [--seconds S] [--per-ms N]

Objects holding a closure made inside their promise's executor, N made every millisecond for S
seconds and dropped at once, beside the same objects holding the executor's argument itself:
bytes allocated and surviving per scavenge (V8's --trace-gc-nvp), one process per case.`);
  process.exit(0);
}
const seconds = Number(values.seconds);
const perMs = Number(values['per-ms']);
if (!(seconds > 0) || !Number.isInteger(perMs) || perMs < 1) {
  console.error('--seconds must be a positive number and --per-ms a whole number ≥ 1');
  process.exit(2);
}

/** ioredis's shape: the executor wraps its argument in a closure kept on the object. */
class Wrapped {
  constructor() {
    this.promise = new Promise((resolve) => {
      this.resolve = (value) => resolve(value);
    });
  }
}

/** The same object keeping the executor's argument itself. */
class Direct {
  constructor() {
    this.promise = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }
}

if (values.child !== undefined) {
  const Pending = values.child === 'closure' ? Wrapped : Direct;
  const t0 = performance.now();
  let made = 0;
  while (performance.now() - t0 < seconds * 1_000) {
    for (let i = 0; i < perMs; i++) {
      const pending = new Pending();
      made += pending.resolve === undefined ? 0 : 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  process.stdout.write(`\nexecutor-closures: made ${made}\n`);
  process.exit(0);
}

/** One case's scavenges: medians of bytes allocated and surviving, and of the share. */
function measure(kind) {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        '--trace-gc-nvp',
        fileURLToPath(import.meta.url),
        '--child',
        kind,
        '--seconds',
        String(seconds),
        '--per-ms',
        String(perMs),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('close', (code) => {
      if (code !== 0) return fail(new Error(`${kind}: the measured process exited with ${code}`));
      const scavenges = text.split('\n').flatMap((line) => scavengeOf(line) ?? []);
      done({
        case: kind,
        scavenges: scavenges.length,
        'allocated KB': Math.round(median(scavenges.map((s) => s.allocated)) / 1024),
        'survived KB': Math.round(median(scavenges.map((s) => s.survived)) / 1024),
        'survived %': +median(scavenges.map((s) => (100 * s.survived) / s.allocated)).toFixed(2),
      });
    });
  });
}

const rows = [];
for (const kind of ['closure', 'direct']) rows.push(await measure(kind));
console.log(`Node ${process.version}, ${perMs} objects a millisecond for ${seconds} s`);
console.table(rows);
