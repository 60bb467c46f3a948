/**
 * `spillway sim --scenario chain|metastable`: runs a scenario of `spillway/sim` in simulated
 * time with Spillway's real primitives, prints a table (or `--json`), and writes an HTML report.
 *
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  chainScenario,
  metastableScenario,
  type ChainResult,
  type MetastableResult,
} from '../sim/index.js';
import { chainReport, metastableReport } from '../sim/report.js';
import { parseArgsUsageError, UsageError, type Command } from './command.js';

const help = `Usage: spillway sim --scenario <name> [options]

Runs a scenario in simulated time: servers are slots with a service time, users arrive on a
schedule, and the callers are Spillway's real dependency() — its retry loop, retry budget,
circuit breaker and adaptive throttle — on a simulated clock. Same seed, same result, byte for
byte. See docs/sim.md.

Scenarios:
  chain        users → A → B → C; C refusing everything, then C at 1.5× its capacity.
               Attempts at C per user action for: naive retries (3 per layer), a capped
               count at one layer, a per-dependency budget, budget + adaptive throttle,
               and Spillway's defaults.
  metastable   a service at load L loses 80 % of its capacity for T seconds. For each retry
               policy, an 8 × 8 grid over L and T: does goodput come back (≥ 0.95 ×
               min(L, 1)) within 60 s of the trigger's end? Red cells are the metastable
               region. Takes about half a minute.

Options:
      --scenario <name>   chain or metastable (required)
      --seed <n>          seed of every random number (an integer; default 1)
      --json              print the result as JSON instead of a table
      --report <file>     also write an HTML report (a heatmap per policy for metastable)
  -h, --help              this text
`;

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        scenario: { type: 'string' },
        seed: { type: 'string' },
        json: { type: 'boolean' },
        report: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw parseArgsUsageError(error) ?? error;
  }
}

function chainTable(r: ChainResult): string {
  const lines: string[] = [];
  for (const [title, list] of [
    ['C refusing everything', r.refusing],
    ['C at 1.5× overload', r.overloaded],
  ] as const) {
    if (list.length === 0) continue;
    lines.push(`${title}: attempts at C per user action`);
    for (const x of list) {
      lines.push(
        `  ${x.label.padEnd(56)} ${x.attemptsAtC.toFixed(2).padStart(7)}   (users served ${(x.succeededRatio * 100).toFixed(1)} %)`,
      );
    }
  }
  return lines.join('\n');
}

function metastableTable(r: MetastableResult): string {
  const lines: string[] = [];
  for (const p of r.panels) {
    lines.push(`${p.label}: . recovered, X metastable (T down, L across)`);
    lines.push(`  T \\ L  ${r.loads.map((l) => String(l).padStart(5)).join('')}`);
    for (const t of r.triggerSeconds) {
      const cells = r.loads.map((l) => {
        const c = p.cells.find((x) => x.load === l && x.triggerSeconds === t)!;
        return (c.recovered ? '.' : 'X').padStart(5);
      });
      lines.push(`  ${`${t} s`.padStart(5)}  ${cells.join('')}`);
    }
  }
  return lines.join('\n');
}

export const command: Command = {
  summary: 'simulate retry storms and metastable failures with the real primitives',
  help,
  async run(argv) {
    const v = parse(argv);
    if (v.help === true) {
      process.stdout.write(help);
      return 0;
    }
    const scenario = v.scenario;
    if (scenario !== 'chain' && scenario !== 'metastable') {
      throw new UsageError(
        `--scenario must be chain or metastable, got ${scenario === undefined ? 'nothing' : JSON.stringify(scenario)}`,
      );
    }
    const seed = v.seed === undefined ? 1 : Number(v.seed);
    if (v.seed !== undefined && (!/^-?\d+$/.test(v.seed) || !Number.isSafeInteger(seed))) {
      throw new UsageError(`--seed must be an integer, got ${JSON.stringify(v.seed)}`);
    }
    const result =
      scenario === 'chain' ? await chainScenario({ seed }) : await metastableScenario({ seed });
    process.stdout.write(
      v.json === true
        ? `${JSON.stringify(result, null, 2)}\n`
        : `${result.scenario === 'chain' ? chainTable(result) : metastableTable(result)}\n`,
    );
    if (v.report !== undefined) {
      const html = result.scenario === 'chain' ? chainReport(result) : metastableReport(result);
      await writeFile(v.report, html);
      if (v.json !== true) process.stdout.write(`report: ${v.report}\n`);
    }
    return 0;
  },
};
