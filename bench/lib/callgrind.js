// What the instruction-count diagnostics (bench/diagnostics/*-instructions.js) share: a Node
// process run under valgrind's callgrind, which counts the instructions it executes in user
// space. Unlike CPU time on a shared VM the count repeats from run to run and does not move when
// the machine is busy; it leaves out the kernel's share, so a ratio of counts overstates a ratio
// of CPU times, never understates. V8 runs --single-threaded, so compilation and GC land on the
// counted thread the same way every run, with its young generation fixed at 16 MB: left to grow,
// its size follows measured throughput and runs of one build would collect more or less often.
// The collector's own functions are counted apart: a scavenge is one large lump, and whether
// one lands among the counted calls can move a total by more than a change being looked for.
// So are V8's optimizing compilers': a path still being compiled in the counted window was not
// warmed up (V8 tiers a function up after a number of calls, which on Node 24 took more requests
// than a diagnostic's default warm-up), and its count is that of a process still starting, not
// of the path.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Exits with a message naming `instead` (the CPU-time bench) when valgrind is missing. */
export function requireValgrind(instead) {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    console.error(`valgrind is not installed (Debian's valgrind package); see ${instead}`);
    process.exit(2);
  }
}

/** A temporary folder for the counts; `done()` removes it unless KEEP_CALLGRIND is set. */
export function callgrindDir(name) {
  const dir = mkdtempSync(join(tmpdir(), `spillway-${name}-callgrind-`));
  return {
    dir,
    done() {
      if (process.env.KEEP_CALLGRIND === undefined) rmSync(dir, { recursive: true, force: true });
      else process.stderr.write(`callgrind files kept in ${dir}\n`);
    },
  };
}

/**
 * Runs `node <args>` under callgrind (its files in `dir`, named after `label`) with an IPC
 * channel, and `drive(child, zero)`: it warms the process up, calls `zero()` (the counters start
 * from there) and does the counted work. Then the counts are dumped and the process killed.
 * Resolves with `{ instructions, collector, compiler, result }` — the counted totals and what
 * `drive` returned; rejects if the process exits first.
 */
export async function countInstructions({ dir, label, args }, drive) {
  const prefix = label.replace(/\W+/g, '_');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, `${prefix}.%p`)}`,
      process.execPath,
      '--single-threaded',
      '--min-semi-space-size=16',
      '--max-semi-space-size=16',
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] },
  );
  const exited = new Promise((_, reject) => {
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code}`)));
  });
  const control = (what) =>
    execFileSync('callgrind_control', [what, String(child.pid)], { stdio: 'ignore' });
  const result = await Promise.race([drive(child, () => control('--zero')), exited]);
  control('--dump');
  // Killed before its dump is complete, the process would leave a truncated file or none.
  const { file, text } = await dumpOf(dir, (f) => f.startsWith(`${prefix}.${child.pid}.`));
  child.removeAllListeners('exit');
  child.kill('SIGKILL');
  const summary = /^summary: (\d+)$/m.exec(text);
  return { instructions: Number(summary[1]), ...collectorAndCompiler(file), result };
}

/**
 * The dump in `dir` whose name `pick` accepts, once callgrind has finished writing it (its last
 * line, `totals:`, is there): `{ file, text }`, looked for every 50 ms, for 30 s at most.
 * `callgrind_control --dump` returns when the dump is asked for, not when it is written.
 */
export async function dumpOf(dir, pick) {
  for (let tries = 0; tries < 600; tries++) {
    const name = readdirSync(dir).find(pick);
    if (name !== undefined) {
      const file = join(dir, name);
      const text = readFileSync(file, 'utf8');
      if (/^totals: \d+$/m.test(text)) return { file, text };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`callgrind wrote no complete dump in ${dir} within 30 s`);
}

/** The first IPC message from `child` for which `pick(message)` is true. */
export function message(child, pick) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (!pick(m)) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
  });
}

// The collector's own functions (scavenges, marking, sweeping, the write barrier), wherever
// they ran.
const collector =
  /v8::internal::(Scaveng|Mark|Sweeper|Heap::|ConcurrentMarking|IncrementalMarking|Evacuat|RememberedSet|PretenuringHandler|LiveObjectRange|BodyDescriptor|HeapObject::SizeFromMap|SemiSpace|PagedSpace|MemoryAllocator|ArrayBufferSweeper|GlobalHandles|\w*Visitor)|heap::base::|Builtins_RecordWrite/;

/**
 * V8's optimizing compilers (TurboFan, Turboshaft, Maglev) and their memory, by function name:
 * their C++ is symbolized in Node's binary; JIT code and builtins are not matched.
 */
export const compilerFunction =
  /v8::internal::(compiler::|Compiler::|Runtime_Compile|OptimizedCompilationInfo|Zone::|AccountingAllocator|turboshaft::|maglev::|SourcePositionTable|CodeGenerator|BytecodeGraphBuilder)/;

/**
 * Instructions the collector's own functions and the optimizing compilers executed in `file`:
 * `{ collector, compiler }`.
 */
function collectorAndCompiler(file) {
  return selfCosts(file, [
    ['collector', collector],
    ['compiler', compilerFunction],
  ]);
}

/**
 * The exclusive cost (callgrind_annotate) of the functions in `file` matched by name, summed per
 * group: `groups` is `[[name, pattern], …]`, a function counted in the first group it matches.
 * Every sum is NaN if the file could not be read.
 */
export function selfCosts(file, groups) {
  const sums = Object.fromEntries(groups.map(([name]) => [name, 0]));
  let out;
  try {
    out = execFileSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', file], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch {
    for (const name of Object.keys(sums)) sums[name] = NaN;
    return sums;
  }
  let listed = false;
  for (const line of out.split('\n')) {
    // The function list starts after its header; above it, the program's totals.
    if (!listed) {
      listed = line.includes('file:function');
      continue;
    }
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line);
    if (m === null) continue;
    const group = groups.find(([, pattern]) => pattern.test(m[2]));
    if (group !== undefined) sums[group[0]] += Number(m[1].replaceAll(',', ''));
  }
  return sums;
}

/**
 * A line naming the rows (`{ name, compiler, total }`, instructions per `unit`: 'response',
 * 'call') whose counted window still compiled more than 1 % of its instructions, with what to
 * do; empty when none did.
 */
export function stillCompilingNote(rows, unit) {
  const late = rows.filter((r) => r.compiler > 0.01 * r.total);
  if (late.length === 0) return '';
  const named = late
    .map(
      (r) =>
        `${r.name} (${Math.round(r.compiler).toLocaleString('en')} of its ${Math.round(r.total).toLocaleString('en')} instructions a ${unit})`,
    )
    .join(', ');
  return (
    `Not warmed up: V8 was still compiling in the counted window of ${named}; ` +
    'those counts include unoptimized code and the compiler. Rerun with a longer --warmup.'
  );
}

/**
 * `count(item)` for every item, two at a time (counts do not depend on contention); a Map of
 * item → result, with progress on stderr.
 */
export async function twoAtATime(items, count, name = String) {
  const results = new Map();
  const queue = [...items];
  let finished = 0;
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      results.set(item, await count(item));
      process.stderr.write(`\r${++finished}/${items.length} counted (${name(item)})`.padEnd(70));
    }
  };
  await Promise.all([worker(), worker()]);
  process.stderr.write('\n');
  return results;
}
