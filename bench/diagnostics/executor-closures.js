#!/usr/bin/env node
// The behaviour behind S7's Node 24 latency (docs/redis.md, "Node 24 and 25 with ioredis"),
// without ioredis, Redis or Spillway. V8's parser marks a function literal assigned straight to
// a property (`this.resolve = (value) => resolve(value)`) to be allocated in the old generation
// (a heuristic for methods set on prototypes). The interpreter, Sparkplug and Maglev honour the
// mark; TurboFan's inlined allocation does not; Node 24 is the first to run Maglev by default.
// A closure in the old generation dies only at a full collection, and until then its context,
// and all the context reaches, survives every scavenge: copied, then promoted. ioredis 6 makes
// its command's `reject` that way, inside the promise's executor, so each command stays alive.
//
// Each case makes objects whose constructor keeps a closure made in its promise's executor, a
// few every millisecond, dropped at once, in a process of its own under V8's --trace-gc-nvp:
//   literal  this.resolve = (value) => resolve(value)   (ioredis's shape: marked)
//   local    const wrapped = (value) => resolve(value); this.resolve = wrapped   (not marked)
//   direct   this.resolve = resolve   (no closure)
// and says where the first object's closure was allocated (V8's %InYoungGeneration). V8 flags
// given to this script reach the measured processes: `node --no-maglev …` on Node 24.
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
seconds and dropped at once: the closure assigned straight to a property (which V8 allocates in
the old generation), through a local, or the executor's argument itself. Bytes allocated and
surviving per scavenge (V8's --trace-gc-nvp), one process per case; V8 flags given to this
script (--no-maglev) reach the measured processes.`);
  process.exit(0);
}
const seconds = Number(values.seconds);
const perMs = Number(values['per-ms']);
if (!(seconds > 0) || !Number.isInteger(perMs) || perMs < 1) {
  console.error('--seconds must be a positive number and --per-ms a whole number ≥ 1');
  process.exit(2);
}

/** ioredis's shape: a function literal assigned to a property, which V8 pretenures. */
class Literal {
  constructor() {
    this.promise = new Promise((resolve) => {
      this.resolve = (value) => resolve(value);
    });
  }
}

/** The same closure, through a local: allocated young. */
class Local {
  constructor() {
    this.promise = new Promise((resolve) => {
      const wrapped = (value) => resolve(value);
      this.resolve = wrapped;
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

const cases = { literal: Literal, local: Local, direct: Direct };

if (values.child !== undefined) {
  const Pending = cases[values.child];
  // Natives syntax is not JavaScript: compiled only in the child, which gets the flag.
  const inYoung = new Function('o', 'return %InYoungGeneration(o)');
  process.stdout.write(`\nexecutor-closures: young ${inYoung(new Pending().resolve)}\n`);
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
        ...process.execArgv,
        '--trace-gc-nvp',
        '--allow-natives-syntax',
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
        'closure allocated': /executor-closures: young true/.test(text) ? 'young' : 'old',
        scavenges: scavenges.length,
        'allocated KB': Math.round(median(scavenges.map((s) => s.allocated)) / 1024),
        'survived KB': Math.round(median(scavenges.map((s) => s.survived)) / 1024),
        'survived %': +median(scavenges.map((s) => (100 * s.survived) / s.allocated)).toFixed(2),
      });
    });
  });
}

const rows = [];
for (const kind of Object.keys(cases)) rows.push(await measure(kind));
const flags = process.execArgv.length > 0 ? ` (${process.execArgv.join(' ')})` : '';
console.log(`Node ${process.version}${flags}, ${perMs} objects a millisecond for ${seconds} s`);
console.table(rows);
