#!/usr/bin/env node
// A diagnostic of the caller-overhead target (dependency.fetch against a bare fetch; the
// verdict is bench/client-cpu.js, in CPU time): the same cases counted in instructions, which
// repeat from run to run where a loopback fetch's CPU time on a shared VM does not. Here the
// CALLING process runs under valgrind's callgrind, which counts the instructions it executes in
// user space; the loopback keep-alive server (bench/lib/ok-server.js) runs in an ordinary child
// process and is not counted. The kernel's share (one socket write and read per call in every
// case) is left out, so a ratio of counts overstates a ratio of CPU times, never understates.
// Each case runs in its own process (one process for several cases would mix their JIT state),
// with V8 --single-threaded so that compilation and GC land on the counted thread the same way
// every run. A case makes W sequential warm-up calls, then, for each of several windows, its
// counters are zeroed, it makes N counted calls (each reads the body) and the count is dumped.
// The figure is the median window's instructions per call WITHOUT V8's optimizing compiler and
// garbage collector (their functions picked by name from the dump), each shown in its own
// column. Both move a window far more than the differences sought: on Node 20, undici's `Fetch`
// and `fetching` are sent to TurboFan again every few hundred calls and each attempt is
// abandoned ("dependency change"), forever; and what a scavenge or an incremental-marking step
// costs depends on the state the heap happens to be in. What is left (the JS, the builtins, the
// rest of the runtime and node) still moves between windows, as code is deoptimized and
// reoptimized: read the medians, and run it twice. That spread is as large as the differences
// sought, so the stub rows measure Spillway's own work apart: the same calls made to a fetch
// that answers at once with a ready Response (no socket, no undici), whose counts repeat to
// within a few instructions; a stub row minus the stub
// reference is what a call adds to any fetch, printed as a share of the bare fetch(url).
// Two cases run at once (counts do not depend on contention, but undici's timers tick by wall
// time, so a loaded machine adds a little to every network row alike).
// With --together the network rows share ONE counted process instead: warm-up calls go round
// the cases one call each, and each round of windows counts every case once, the order turned
// by one case per round. Node's own fetch, undici and the stream code under it are then one
// and the same compiled code for every row, so a row minus the bare row in the same round (the
// "paired" column) no longer carries the luck of how V8 happened to compile Node's internals in
// one process and not in another; what the rows' objects do to those shared call sites (more
// shapes seen, more polymorphic) is paid by every row alike.
// Usage: node bench/diagnostics/client-instructions.js [--requests 1000] [--warmup 4000]
//          [--windows 3] [--only a,b] [--together] [--dist other/dist] [--json]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { compilerFunction, dumpOf, selfCosts } from '../lib/callgrind.js';
import { ambientCase, fetchCases, stubCases, stubReference } from '../lib/client-cases.js';
import { startOkServer } from '../lib/ok-server.js';
import { median } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '4000' },
    windows: { type: 'string', default: '3' },
    only: { type: 'string' },
    // Another build of Spillway to measure (e.g. a copy of dist/ made before a change).
    dist: { type: 'string' },
    together: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    // Internal: the process under valgrind runs these cases against this URL.
    case: { type: 'string', multiple: true },
    url: { type: 'string' },
  },
});

// The other benches' deadline is 5 s; a call under valgrind can take that long when V8 compiles
// during it, so here it is 50 s (the bare and the Spillway rows both send five digits).
const deadlineMs = 50_000;

// V8's garbage collector by function name (the compiler's, compilerFunction, is lib/callgrind's;
// JIT code, builtins and the rest of the runtime are not matched). Each scavenge also walks the
// startup and shared object caches as roots (IterateObjectCache, a large share of a scavenge,
// called only from Heap::IterateRoots).
const gcFunction =
  /v8::internal::\S*(Scaveng|Sweep|Mark|Evacuat|GCTracer|Heap::|Pretenuring|Remembered|SlotSet|Compactor|BodyDescriptor|MemoryChunk|FreeList|MinorGC|SemiSpace|NewSpace|PagedSpace|LargeObjectSpace|RootVisitor|WeakObjects|LocalHeap)|heap::base::|cppgc::|v8::platform::Default|v8::internal::\(anonymous namespace\)::IterateObjectCache|SerializerDeserializer::Iterate/;

const importClient = () =>
  import(
    values.dist === undefined
      ? '../../dist/client/index.js'
      : pathToFileURL(join(values.dist, 'client/index.js')).href
  );

/** Stub calls are ~100 × cheaper than a real fetch: they run this many times more calls. */
const stubScale = 20;
const isStub = (name) => name.startsWith('stub: ');

/** Each case's call, made fresh in the counted process; `url` ends with '/'. */
const cases = {
  ...fetchCases({
    loadDependency: async () => (await importClient()).dependency,
    loadRunInContext: async () => (await importClient()).runInContext,
    deadlineMs,
  }),
  ...stubCases({ loadDependency: async () => (await importClient()).dependency, deadlineMs }),
};
const bareCase = 'bare fetch(url)';

if (values.case !== undefined) {
  // The counted process: warm up, then one window of counted calls of one case per message.
  if (values.url === undefined) throw new Error('--case needs --url');
  const calls = [];
  for (const name of values.case) {
    const make = cases[name];
    if (make === undefined) throw new Error(`no case ${name}`);
    calls.push(await make(values.url));
  }
  process.on('message', async (m) => {
    if (m.warmup !== undefined) {
      // Round the cases, one call each, so that each meets the code the others shaped.
      for (let i = 0; i < m.warmup; i++) for (const call of calls) await call();
      process.send({ ready: true });
    } else if (m.requests !== undefined) {
      const call = calls[m.case];
      for (let i = 0; i < m.requests; i++) await call();
      process.send({ done: true });
    } else if (m.exit === true) {
      process.exit(0);
    }
  });
  process.send({ started: true });
} else {
  await main();
}

async function main() {
  const requests = Number(values.requests);
  const warmup = Number(values.warmup);
  const windows = Number(values.windows);
  if (!(requests > 0) || !(warmup >= 0) || !(windows >= 1)) {
    throw new Error('--requests, --warmup and --windows must be numbers');
  }
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    console.error("valgrind is not installed (Debian's valgrind package); see bench/client-cpu.js");
    process.exit(2);
  }
  const wanted = values.only?.split(',');
  // The ambient case runs only when named (see client-cases.js).
  const picked = Object.keys(cases).filter(
    (c) =>
      (c !== ambientCase || wanted?.some((w) => c.includes(w)) === true) &&
      (wanted === undefined || c === bareCase || wanted.some((w) => c.includes(w))),
  );
  // A stub row means something only beside the stub reference.
  const names = Object.keys(cases).filter(
    (c) => picked.includes(c) || (c === stubReference && picked.some(isStub)),
  );

  // The server the other client benches call too, in an ordinary (uncounted) process.
  const { url, child: server } = await startOkServer();
  const dir = mkdtempSync(join(tmpdir(), 'spillway-client-callgrind-'));

  const live = new Set();

  /**
   * Instructions per call in each window of the cases of one counted process: for each case,
   * its windows in the order they were counted (window w of every case in round w).
   */
  async function count(group) {
    const prefix = group[0].replace(/\W+/g, '_').slice(0, 60);
    const scale = isStub(group[0]) ? stubScale : 1;
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        '-q',
        `--callgrind-out-file=${join(dir, `${prefix}.%p`)}`,
        process.execPath,
        '--single-threaded',
        // A young generation of fixed size: left to grow, it settles differently in each process.
        '--min-semi-space-size=1',
        '--max-semi-space-size=1',
        new URL(import.meta.url).pathname,
        ...group.flatMap((name) => ['--case', name]),
        '--url',
        url,
        ...(values.dist === undefined ? [] : ['--dist', resolve(values.dist)]),
      ],
      { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
    );
    live.add(child);
    const messages = [];
    let waiting;
    child.on('message', (m) => {
      if (waiting === undefined) messages.push(m);
      else waiting(m);
    });
    const exited = new Promise((_, reject) =>
      child.once('exit', (code) => reject(new Error(`${group[0]} exited with ${code}`))),
    );
    exited.catch(() => {});
    const next = () =>
      Promise.race([
        exited,
        new Promise((resolve) => {
          if (messages.length > 0) resolve(messages.shift());
          else
            waiting = (m) => {
              waiting = undefined;
              resolve(m);
            };
        }),
      ]);
    await next(); // started
    child.send({ warmup: warmup * scale });
    await next(); // ready
    const perCall = group.map(() => []);
    for (let w = 0; w < windows; w++) {
      for (let k = 0; k < group.length; k++) {
        // Round w starts one case further on, so no case always follows the same one.
        const c = (w + k) % group.length;
        execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
        child.send({ requests: requests * scale, case: c });
        await next(); // done
        const before = new Set(readdirSync(dir));
        execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
        const { file, text } = await dumpOf(
          dir,
          (f) => f.startsWith(`${prefix}.${child.pid}.`) && !before.has(f),
        );
        const summary = /^summary: (\d+)$/m.exec(text);
        const { compile, gc } = selfCosts(file, [
          ['compile', compilerFunction],
          ['gc', gcFunction],
        ]);
        const total = Number(summary[1]);
        const calls = requests * scale;
        perCall[c].push({
          total: total / calls,
          work: (total - compile - gc) / calls,
          compile: compile / calls,
          gc: gc / calls,
        });
      }
    }
    child.removeAllListeners('exit');
    child.kill('SIGKILL');
    live.delete(child);
    return new Map(group.map((name, c) => [name, perCall[c]]));
  }

  // One counted process per case; with --together, one for all the network cases.
  const groups = values.together
    ? [names.filter((name) => !isStub(name)), ...names.filter(isStub).map((name) => [name])]
    : names.map((name) => [name]);
  const results = new Map();
  const queue = groups.filter((group) => group.length > 0);
  let finished = 0;
  async function worker() {
    for (let group = queue.shift(); group !== undefined; group = queue.shift()) {
      for (const [name, perCall] of await count(group)) results.set(name, perCall);
      finished += group.length;
      process.stderr.write(`\r${finished}/${names.length} counted (${group.at(-1)})`.padEnd(100));
    }
  }
  try {
    await Promise.all([worker(), worker()]);
  } finally {
    for (const child of live) {
      child.removeAllListeners('exit');
      child.kill('SIGKILL');
    }
    server.kill();
  }
  process.stderr.write('\n');
  if (process.env.KEEP_CALLGRIND === undefined) rmSync(dir, { recursive: true, force: true });
  else process.stderr.write(`callgrind files kept in ${dir}\n`);

  const bareWork = results.get(bareCase).map((w) => w.work);
  const bare = median(bareWork);
  const rows = names.map((name) => {
    const ws = results.get(name);
    const work = ws.map((w) => w.work);
    const m = median(work);
    // Together, window w of every network case was counted in round w of the same process.
    const paired =
      values.together && !isStub(name) ? median(work.map((x, w) => x / bareWork[w])) : undefined;
    return {
      name,
      instructionsPerCall: Math.round(m),
      min: Math.round(Math.min(...work)),
      max: Math.round(Math.max(...work)),
      ratio: isStub(name) ? undefined : m / bare,
      pairedRatio: paired,
      gcPerCall: Math.round(median(ws.map((w) => w.gc))),
      compilePerCall: Math.round(median(ws.map((w) => w.compile))),
      totalPerCall: Math.round(median(ws.map((w) => w.total))),
      windows: ws.map((w) => ({
        total: Math.round(w.total),
        work: Math.round(w.work),
        compile: Math.round(w.compile),
        gc: Math.round(w.gc),
      })),
    };
  });
  // Spillway's own instructions per call: a stub row minus the stub reference, and that as a
  // share of a bare fetch(url) measured in the same run.
  const reference = rows.find((r) => r.name === stubReference);
  const own = rows
    .filter((r) => isStub(r.name) && r !== reference)
    .map((r) => {
      const added = r.instructionsPerCall - reference.instructionsPerCall;
      return { name: r.name, added, shareOfBareFetch: added / bare };
    });
  if (values.json) {
    console.log(
      JSON.stringify(
        {
          node: process.version,
          dist: values.dist ?? 'dist',
          requests,
          warmup,
          windows,
          together: values.together,
          rows,
          own,
        },
        null,
        2,
      ),
    );
    return;
  }
  const n = (x) => x.toLocaleString('en');
  console.log(
    `Node ${process.version}; user-space instructions of the calling process per call, without V8's optimizing compiler and GC (shown apart); ${warmup} warm-up calls, then ${windows} windows of ${requests} counted calls (${stubScale} × both for stub rows): median window, range over windows.${values.together ? ' The network rows in one process, one window of each per round; paired: the median over rounds of a row ÷ the bare row in the same round.' : ''}${values.dist === undefined ? '' : ` Build: ${values.dist}.`}\n`,
  );
  const pairedColumn = values.together ? ' paired |' : '';
  console.log(
    `| case | instructions per call | windows (min–max) | × bare fetch(url) |${pairedColumn} GC (left out) | compiler (left out) | all |`,
  );
  console.log(`|---|---:|---:|---:|${values.together ? '---:|' : ''}---:|---:|---:|`);
  for (const r of rows) {
    const paired = !values.together
      ? ''
      : ` ${r.pairedRatio === undefined ? '–' : r.pairedRatio.toFixed(3)} |`;
    console.log(
      `| ${r.name} | ${n(r.instructionsPerCall)} | ${n(r.min)}–${n(r.max)} | ${r.ratio === undefined ? '–' : r.ratio.toFixed(3)} |${paired} ${n(r.gcPerCall)} | ${n(r.compilePerCall)} | ${n(r.totalPerCall)} |`,
    );
  }
  if (own.length > 0) {
    console.log(`\nSpillway's own work per call (stub row − stub reference):`);
    for (const o of own) {
      console.log(
        `- ${o.name.slice('stub: '.length)}: ${n(o.added)} instructions, ${(100 * o.shareOfBareFetch).toFixed(2)} % of a bare fetch(url) (${n(Math.round(bare))})`,
      );
    }
  }
}
