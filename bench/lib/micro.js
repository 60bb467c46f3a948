// Micro-benchmark runner: every case of a group runs in the same process, interleaved round by
// round in a shuffled order, so machine noise hits all of them alike (BENCHMARKS.md rule 4).
// Written here rather than taken from tinybench or mitata because neither interleaves cases
// across rounds, which is what makes a ratio between cases trustworthy on a shared machine.
import { cpus } from 'node:os';

/**
 * @typedef {{ name: string, peer?: boolean, kind: 'sync' | 'async', make: () => (() => unknown) }} Case
 * @typedef {{ name: string, cases: Case[], note?: string }} Group
 */

const now = () => process.hrtime.bigint();

/** ns per op for `ops` calls of a synchronous function. */
function timeSync(fn, ops) {
  let sink = 0;
  const t0 = now();
  for (let i = 0; i < ops; i++) if (fn()) sink++;
  const ns = Number(now() - t0) / ops;
  if (sink === -1) console.log('');
  return ns;
}

/** ns per op for `ops` awaited calls of an async function. */
async function timeAsync(fn, ops) {
  const t0 = now();
  for (let i = 0; i < ops; i++) await fn();
  return Number(now() - t0) / ops;
}

function quantile(sorted, q) {
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  const hi = Math.ceil(i);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (i - lo);
}

function shuffle(array) {
  for (let i = array.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [array[i], array[j]] = [array[j], array[i]];
  }
  return array;
}

/**
 * Runs one group: warm-up, then `rounds` rounds; each round times every case once, in a fresh
 * random order. Returns per-case median and interquartile range in ns/op.
 */
export async function runGroup(group, { rounds = 15, targetMs = 60, onProgress } = {}) {
  const fns = group.cases.map((c) => c.make());
  // Calibrate ops per round so each timing lasts about targetMs.
  const ops = [];
  for (let k = 0; k < fns.length; k++) {
    const c = group.cases[k];
    let n = 1_000;
    for (;;) {
      const ns = c.kind === 'sync' ? timeSync(fns[k], n) : await timeAsync(fns[k], n);
      if (ns * n >= (targetMs * 1e6) / 4 || n >= 5e7) {
        ops.push(Math.max(1_000, Math.round((targetMs * 1e6) / ns)));
        break;
      }
      n *= 4;
    }
  }
  const samples = group.cases.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (const k of shuffle([...fns.keys()])) {
      const c = group.cases[k];
      samples[k].push(
        c.kind === 'sync' ? timeSync(fns[k], ops[k]) : await timeAsync(fns[k], ops[k]),
      );
    }
    onProgress?.(r + 1, rounds);
  }
  return group.cases.map((c, k) => {
    const s = [...samples[k]].sort((a, b) => a - b);
    // Each round's time over the first case's in the same round: a slow spell of the machine
    // moves both, so the per-round ratio is steadier than a ratio of medians.
    const ratios = samples[k].map((x, r) => x / samples[0][r]).sort((a, b) => a - b);
    return {
      name: c.name,
      peer: c.peer === true,
      kind: c.kind,
      median: quantile(s, 0.5),
      p25: quantile(s, 0.25),
      p75: quantile(s, 0.75),
      ratio: quantile(ratios, 0.5),
      ratioP25: quantile(ratios, 0.25),
      ratioP75: quantile(ratios, 0.75),
    };
  });
}

/** Renders a group's results as a Markdown table with ratios against the first (Spillway) case. */
export function table(group, results) {
  const base = results[0];
  const fastestPeer = results.filter((r) => r.peer).sort((a, b) => a.median - b.median)[0];
  const lines = [
    `### ${group.name}`,
    '',
    group.note ?? '',
    '',
    '| case | kind | ns/op (median) | IQR | × first row | × first row, per round (IQR) |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.name}${r.peer ? '' : ' **(spillway)**'} | ${r.kind} | ${r.median.toFixed(1)} | ${r.p25.toFixed(1)}–${r.p75.toFixed(1)} | ${(r.median / base.median).toFixed(2)} | ${r.ratio.toFixed(3)} (${r.ratioP25.toFixed(3)}–${r.ratioP75.toFixed(3)}) |`,
    );
  }
  if (fastestPeer) {
    lines.push('', `Fastest peer: ${fastestPeer.name}, ${fastestPeer.median.toFixed(1)} ns/op.`);
  }
  return lines.join('\n');
}

/** The machine a run is on (CPU model × cores, Node version), for a report's header. */
export function machineLine() {
  return `${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Node ${process.version}`;
}

/**
 * Runs `groups` one after another, with progress on stderr, and prints their tables under a
 * line naming the machine, the rounds and `about` (build, command) — or, with `json`, the
 * results as JSON. Returns the results by group.
 */
export async function runGroups(groups, { rounds = 15, json = false, about = '' } = {}) {
  const machine = machineLine();
  const all = [];
  const out = [
    `Machine: ${machine}. Rounds: ${rounds}, interleaved.${about ? ` ${about}` : ''}`,
    '',
  ];
  for (const group of groups) {
    const results = await runGroup(group, {
      rounds,
      onProgress: (r, n) => process.stderr.write(`\r${group.name}: round ${r}/${n}   `),
    });
    process.stderr.write('\n');
    all.push({ group: group.name, results });
    out.push(table(group, results), '');
  }
  if (json) console.log(JSON.stringify({ machine, groups: all }, null, 2));
  else console.log(out.join('\n'));
  return all;
}
