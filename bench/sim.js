// Speed of `spillway/sim` (BENCHMARKS.md S12): simulated requests (attempts reaching any
// simulated server) per second of wall time for the chain scenario's runs and the spike
// scenario's, each of those scenarios whole as `spillway sim --scenario` runs it (all its runs
// in one: what a user waits for), the full metastable grid's wall time, and the event list on
// its own beside `spillway/testing`'s virtual clock (which flushes promise callbacks with
// setImmediate).
//
// A last column gives the user actions (arrivals) a wall second: where a caller's breaker keeps
// them from every server (the chain's `defaults` row) requests are few and say little.
//
// Each run is made in this process at least --runs times and until --min-ms of wall time has
// gone into it (a spike run is 5,000 requests, done in milliseconds: four of them leave the JIT
// half done). The first is cold (the JIT compiles as it goes), the median of the later half warm
// (what a sweep of many runs sees). A whole scenario's cold figure comes from processes of its
// own, one run each: what one `spillway sim` invocation sees. Speed depends on the Node
// version (promises, errors and timers each cost differently on 20, 22 and 24): run it on each.
//
// Usage: npm run build && node bench/sim.js [--runs 5] [--min-ms 1000] [--json]
//        (SPILLWAY_DIST=<dir> to load another build)
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { median } from './lib/stats.js';
import { benchOptions, usageError } from './lib/usage.js';
import { wholeScenario } from './lib/sim-scenario.js';

const opts = benchOptions(new URL(import.meta.url), {
  runs: { type: 'string', default: '5' },
  'min-ms': { type: 'string', default: '1000' },
  json: { type: 'boolean', default: false },
});
const runs = Number(opts.runs);
if (!Number.isInteger(runs) || runs < 2) {
  usageError(`--runs must be a whole number ≥ 2 (one cold run, the rest warm), got ${opts.runs}`);
}
const minMs = Number(opts['min-ms']);
if (!Number.isFinite(minMs) || minMs < 0) {
  usageError(`--min-ms must be a number of milliseconds ≥ 0, got ${opts['min-ms']}`);
}
/** Runs of one row at most, however short each is. */
const maxRuns = 1_000;

const dist = process.env.SPILLWAY_DIST ?? new URL('../dist', import.meta.url).pathname;
const lib = await import(`${dist}/sim/index.js`);
const coldScript = new URL('./lib/sim-cold.js', import.meta.url).pathname;
const { createVirtualClock } = await import(`${dist}/testing/index.js`);

/** The chain's options for `policy`: A → B → C, C refusing everything or at 1.5 × overload. */
function chainOptions(policy, overloaded) {
  const [user, ab, bc] = lib.chainPolicies[policy].hops;
  const hop = (name, to, retry) => ({
    name,
    slots: 10_000,
    maxQueue: 0,
    serviceTime: { kind: 'constant', ms: 0.5 },
    calls: [{ to, retry }],
  });
  const c = overloaded
    ? { name: 'C', slots: 10, maxQueue: 100, serviceTime: { kind: 'exponential', meanMs: 10 } }
    : {
        name: 'C',
        slots: 10_000,
        maxQueue: 0,
        serviceTime: { kind: 'constant', ms: 0.5 },
        answer: 'refuse',
      };
  return {
    seed: 1,
    durationMs: overloaded ? 20_000 : 30_000,
    drainMs: 10_000,
    nodes: [hop('A', 'B', ab), hop('B', 'C', bc), c],
    clients: [
      {
        name: 'u',
        to: 'A',
        deadlineMs: overloaded ? 1_000 : 5_000,
        arrivals: { ratePerSec: overloaded ? 1_500 : 1_000 },
        retry: user,
      },
    ],
  };
}

/** The spike scenario's run of `server` at `shape` × capacity (as `spikeScenario` makes it). */
function spikeOptions(server, shape) {
  const { slots, serviceMs, deadlineMs } = lib.spikeServer;
  return {
    seed: 1,
    durationMs: 10_000,
    drainMs: deadlineMs,
    nodes: [lib.spikeServers[server].node],
    clients: [
      {
        name: 'callers',
        to: 'server',
        deadlineMs,
        arrivals: { ratePerSec: (shape * slots * 1_000) / serviceMs },
        retry: { kind: 'none', timeoutMs: deadlineMs },
      },
    ],
  };
}

/** One simulation of `options`: requests (at every server), user actions, events. */
async function once(options) {
  const r = await lib.simulate(options);
  return {
    requests: Object.values(r.nodes).reduce((n, x) => n + x.received, 0),
    actions: Object.values(r.clients).reduce((n, x) => n + x.actions, 0),
    events: r.events,
  };
}

/**
 * Runs of `run` (at least `runs`, and until `minMs` of wall time): requests, events, and
 * simulated requests per wall second, the first cold and the later half's median warm.
 */
async function measure(run) {
  const perSec = [];
  const actionsPerSec = [];
  let last;
  let spentMs = 0;
  for (let i = 0; i < maxRuns && (i < runs || spentMs < minMs); i++) {
    const t0 = performance.now();
    last = await run();
    const ms = performance.now() - t0;
    spentMs += ms;
    perSec.push((last.requests / ms) * 1000);
    actionsPerSec.push((last.actions / ms) * 1000);
  }
  const later = Math.max(1, Math.floor(perSec.length / 2));
  const warm = median(perSec.slice(later));
  const warmActions = median(actionsPerSec.slice(later));
  return { ...last, cold: perSec[0], warm, warmActions, runs: perSec.length };
}

/**
 * A whole scenario's cold figure: the median of `runs` processes of its own, each running it
 * once (bench/lib/sim-cold.js), as one `spillway sim --scenario NAME` does — in this process
 * the rows before it have already warmed the JIT.
 */
function coldInFreshProcesses(name) {
  const perSec = [];
  for (let i = 0; i < runs; i++) {
    const child = spawnSync(process.execPath, [coldScript, name], {
      encoding: 'utf8',
      env: { ...process.env, SPILLWAY_DIST: dist },
    });
    if (child.status !== 0) {
      throw new Error(`${coldScript} ${name} failed (${child.status}): ${child.stderr}`);
    }
    const r = JSON.parse(child.stdout);
    perSec.push((r.requests / r.ms) * 1000);
  }
  return median(perSec);
}

const rows = [];
const fmt = (x) => Math.round(x).toLocaleString('en').padStart(9);
const show = (row) => {
  rows.push(row);
  if (!opts.json) {
    console.log(
      `  ${row.scenario.padEnd(7)} ${row.run.padEnd(28)} ${String(row.requests).padStart(8)} ${(Number.isNaN(row.events) ? '–' : String(row.events)).padStart(8)} ${String(row.runs).padStart(4)} ${fmt(row.cold)} ${fmt(row.warm)} ${fmt(row.warmActions)}`,
    );
  }
};
if (!opts.json) {
  console.log(
    `${cpus()[0]?.model ?? 'CPU'} × ${cpus().length}, Node ${process.version}, each run at least ${runs} times and for ${minMs} ms`,
  );
  console.log('simulated requests per second of wall time (requests = attempts at every server;');
  console.log('user actions = what the users sent, counted whether or not a caller let them out):');
  console.log(
    `  ${'scenario'.padEnd(7)} ${'run'.padEnd(28)} ${'requests'.padStart(8)} ${'events'.padStart(8)} ${'runs'.padStart(4)} ${'cold'.padStart(9)} ${'warm'.padStart(9)} ${'actions/s'.padStart(9)}`,
  );
}
for (const overloaded of [false, true]) {
  for (const policy of Object.keys(lib.chainPolicies)) {
    const m = await measure(() => once(chainOptions(policy, overloaded)));
    show({
      scenario: 'chain',
      run: `${overloaded ? 'C at 1.5 ×' : 'C refusing'}, ${policy}`,
      ...m,
    });
  }
}
for (const server of Object.keys(lib.spikeServers)) {
  for (const shape of lib.spikeShapes) {
    const m = await measure(() => once(spikeOptions(server, shape)));
    show({ scenario: 'spike', run: `${server} at ${shape} ×`, ...m });
  }
}

// The scenarios as a user runs them: cold in processes of their own (what one `spillway sim`
// invocation sees), warm here (what a sweep sees).
for (const name of ['chain', 'spike']) {
  const m = await measure(() => wholeScenario(lib, name));
  show({ scenario: name, run: 'the whole scenario (CLI)', ...m, cold: coldInFreshProcesses(name) });
}

const t0 = performance.now();
await lib.metastableScenario({ seed: 1 });
const gridSeconds = (performance.now() - t0) / 1000;

// The event list alone: N timers each queuing one promise callback.
async function bare(kind, n) {
  const t0 = performance.now();
  let fired = 0;
  if (kind === 'virtual') {
    const clock = createVirtualClock({ maxTimers: 10 });
    const f = () => {
      fired++;
      void Promise.resolve().then(() => {});
      if (fired < n) clock.setTimer(1, f);
    };
    clock.setTimer(1, f);
    await clock.advance(n + 1);
  } else {
    const r = await lib.simulate({
      durationMs: n,
      drainMs: 0,
      nodes: [{ name: 's', slots: 1, maxQueue: 0, serviceTime: { kind: 'constant', ms: 0.001 } }],
      clients: [
        {
          name: 'u',
          to: 's',
          deadlineMs: 10,
          arrivals: { ratePerSec: 1_000, process: 'constant' },
          retry: { kind: 'none' },
        },
      ],
    });
    fired = r.events;
  }
  return (fired / (performance.now() - t0)) * 1000;
}
const simEvents = await bare('sim', 200_000);
const virtualEvents = await bare('virtual', 200_000);

if (opts.json) {
  console.log(
    JSON.stringify(
      {
        node: process.version,
        cpu: cpus()[0]?.model,
        runs,
        minMs,
        rows,
        gridSeconds,
        simEvents,
        virtualEvents,
      },
      null,
      2,
    ),
  );
} else {
  console.log(`metastable grid (4 policies × 8 × 8 cells): ${gridSeconds.toFixed(1)} s wall`);
  console.log(`one request per event pair, sim: ${fmt(simEvents).trim()} events/s`);
  console.log(`bare timers, testing's virtual clock: ${fmt(virtualEvents).trim()} events/s`);
}
