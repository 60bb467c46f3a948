/**
 * `spillway demo`: the main job. Starts the accept-everything server, the bare bulkhead peer
 * and Spillway's bounded server in child processes (pinned to their own CPU where taskset
 * exists, the generator on another), offers each the same open-loop scenarios, prints what
 * happened and writes an HTML report with charts.
 *
 * @module
 */
import { request } from 'node:http';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import {
  alignColumns,
  formatMs,
  runLoad,
  writeReport,
  type GroupStats,
  type LoadResult,
} from '../load/index.js';
import { UsageError, type Command } from './command.js';
import { scenarios, callerDeadlineMs, type Scenario } from './demo/scenarios.js';
import { pinSelf, startServer, canPin, type ServerProcess } from './demo/server-process.js';
import { scaleOut, type ScaleOutRecord } from './demo/scale-out.js';
import { progressReporter } from './progress.js';

const help = `Usage: spillway demo [options]

Shows backpressure holding. Starts three servers over the same simulated database (10
connections × 30 ms, so capacity is exactly 333 req/s), each in its own process:

  naive     accepts everything (an unbounded line, no deadline)
  bulkhead  a bare node:http server with cockatiel's bulkhead(10, 10), the peer to beat
            (skipped if cockatiel is not installed)
  bounded   Spillway: 10 slots, a line of 10 bounded at 50 ms, 150/s per client, 1 s deadline

and offers each, open loop, the same scenarios:

  reference  500 req/s for 5 s from 100 clients, callers giving up after 1 s, then one more
             request timed after the rush
  greedy     one client at 400 req/s next to 100 clients at 1 req/s each
  10x        3,300 req/s for 5 s, then one more request timed after the rush

It prints, per scenario and server: requests sent and ok, goodput as a fraction of capacity
(G), latency of ok answers, refusals by status, timeouts, refusal latency, the server's peak
RSS and how long the next request took after the rush — then checks the targets. It writes
an HTML report with charts (open it in a browser; it needs no network).

Options:
  --quick               2 s per scenario instead of 5 (for CI and a first look)
  --json                print the results as JSON on stdout (progress stays on stderr)
  --report <file>       where to write the HTML report (default: spillway-report.html);
                        --no-report to skip it
  --framework <name>    node, express or fastify for naive and bounded (default: node)
  --servers <list>      comma-separated subset of naive,bulkhead,bounded
  --scenarios <list>    comma-separated subset of reference,greedy,10x
  --redis <url>         the demo at scale instead: --replicas bounded replicas (default 3)
                        behind a round-robin split of the greedy scenario, first with
                        per-replica quotas, then with quotas shared in this Redis
                        (redis://127.0.0.1:6379); needs ioredis or redis installed
  --replicas <n>        replicas for --redis (default 3)
  -h, --help            show this help

Examples:
  spillway demo
  spillway demo --quick --report /tmp/demo.html
  spillway demo --framework fastify --servers naive,bounded --json > demo.json
  spillway demo --redis redis://127.0.0.1:6379 --replicas 3
`;

/** Capacity of the reference setup: 10 connections / 30 ms. */
const capacityPerSec = 10 / 0.03;

type ServerName = 'naive' | 'bulkhead' | 'bounded';

/** How the request sent after the rush fared. */
interface NextRequest {
  /** Its latency (for `timeout`, how long it waited before giving up). */
  readonly ms: number | null;
  readonly outcome: string;
}

interface RunRecord {
  readonly scenario: Scenario;
  readonly server: ServerName;
  readonly result: LoadResult;
  readonly next: NextRequest | undefined;
  readonly unloadedMs: number;
  readonly idleRssBytes: number;
  readonly peakRssBytes: number;
}

interface Target {
  readonly name: string;
  readonly pass: boolean;
  readonly detail: string;
}

export const demo: Command = {
  summary: 'watch an accept-everything server collapse and Spillway hold, side by side',
  help,
  async run(argv) {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        quick: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        report: { type: 'string', default: 'spillway-report.html' },
        'no-report': { type: 'boolean', default: false },
        framework: { type: 'string', default: 'node' },
        servers: { type: 'string', default: 'naive,bulkhead,bounded' },
        scenarios: { type: 'string', default: 'reference,greedy,10x' },
        redis: { type: 'string' },
        replicas: { type: 'string', default: '3' },
      },
    });
    const framework = values.framework;
    if (framework !== 'node' && framework !== 'express' && framework !== 'fastify') {
      throw new UsageError(`--framework must be node, express or fastify, got '${framework}'`);
    }
    const servers = list('servers', values.servers, [
      'naive',
      'bulkhead',
      'bounded',
    ]) as ServerName[];
    const chosen = list('scenarios', values.scenarios, ['reference', 'greedy', '10x']);
    const quick = values.quick;
    const log = (line: string): void => void process.stderr.write(`${line}\n`);

    // The generator gets its own CPU; servers get another.
    const cpus = availableParallelism();
    const serverCpu = canPin && cpus >= 2 ? 0 : undefined;
    if (serverCpu !== undefined) pinSelf(1);
    log(
      `spillway demo: capacity ${Math.round(capacityPerSec)} req/s (10 connections × 30 ms); ` +
        (serverCpu === undefined
          ? 'not pinned (needs taskset and 2 CPUs)'
          : 'servers pinned to CPU 0, generator to CPU 1'),
    );

    if (values.redis !== undefined) {
      return runScaleOut({
        redisUrl: values.redis,
        replicas: values.replicas,
        quick,
        json: values.json,
        report: values['no-report'] ? undefined : values.report,
        serverCpu,
        log,
      });
    }

    const records: RunRecord[] = [];
    const skipped: string[] = [];
    const plan = scenarios({ quick }).filter((s) => chosen.includes(s.id));
    const nextRequestDeadlineMs = quick ? 15_000 : 60_000;
    for (const scenario of plan) {
      log(`\n${scenario.id}: ${scenario.title}`);
      for (const name of servers) {
        if (skipped.includes(name)) continue;
        const args = name === 'bulkhead' ? ['bulkhead'] : [name, '--framework', framework];
        let server: ServerProcess;
        try {
          server = await startServer(args, serverCpu);
        } catch (error) {
          if (name === 'bulkhead') {
            skipped.push(name);
            log(
              `  bulkhead: skipped (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
            );
            continue;
          }
          throw error;
        }
        try {
          records.push(
            await runOne({ scenario, server: name, target: server, nextRequestDeadlineMs }, log),
          );
        } finally {
          await server.stop();
        }
      }
    }

    const targets = checkTargets(records);
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify(toJson(records, targets, { quick, framework, pinned: serverCpu !== undefined }), null, 2)}\n`,
      );
    } else {
      process.stdout.write(`${formatSummary(records, targets)}\n`);
    }
    if (!values['no-report']) {
      await writeReport(values.report, {
        title: 'Spillway demo: accept everything vs. accept what you can finish',
        subtitle: `Simulated database of 10 connections × 30 ms (capacity ${Math.round(capacityPerSec)} req/s); callers give up after 1 s; ${framework} servers.`,
        capacityPerSec,
        runs: records.map((r) => ({
          ...r.result,
          notes: {
            'server peak RSS': `${mb(r.peakRssBytes)} (idle ${mb(r.idleRssBytes)})`,
            'next request': nextRequestText(r.next),
          },
        })),
        notes: [
          'naive: an unbounded line and no deadline. bulkhead: cockatiel bulkhead(10, 10) on bare node:http. bounded: Spillway with 10 slots, a line of 10 bounded at 50 ms, 150/s per client and a 1 s deadline.',
          'Load is open loop: requests go out on schedule whatever the server does, latency counts from the intended send time, and callers destroy the socket after 1 s.',
          ...targets.map((t) => `${t.pass ? '✓' : '✗'} ${t.name}: ${t.detail}`),
        ],
      });
      log(`\nreport: ${values.report}`);
    }
    const invalid = records.filter((r) => !r.result.validity.valid);
    if (invalid.length > 0) {
      log(
        `\nwarning: ${invalid.length} of ${records.length} runs were not valid (the generator fell behind or the machine was busy); their numbers are flagged, not clean.`,
      );
    }
    return 0;
  },
};

async function runScaleOut(o: {
  readonly redisUrl: string;
  readonly replicas: string;
  readonly quick: boolean;
  readonly json: boolean;
  readonly report: string | undefined;
  readonly serverCpu: number | undefined;
  readonly log: (line: string) => void;
}): Promise<number> {
  if (!/^rediss?:\/\/\S+$/.test(o.redisUrl)) {
    throw new UsageError(
      `--redis must be a redis:// URL such as redis://127.0.0.1:6379, got '${o.redisUrl}'`,
    );
  }
  const replicas = Number(o.replicas);
  if (!Number.isSafeInteger(replicas) || replicas < 2 || replicas > 8) {
    throw new UsageError(`--replicas must be a whole number from 2 to 8, got '${o.replicas}'`);
  }
  const records = await scaleOut({
    redisUrl: o.redisUrl,
    replicas,
    quick: o.quick,
    serverCpu: o.serverCpu,
    log: o.log,
  });
  const redis = records.find((r) => r.quotas === 'redis')!;
  const memory = records.find((r) => r.quotas === 'memory')!;
  const politeShare = redis.polite.sent === 0 ? 0 : redis.polite.ok / redis.polite.sent;
  const targets: Target[] = [
    {
      name: 'per-client quotas hold across replicas with Redis',
      pass: redis.greedy.ok <= redis.quotaRequests * 1.01 && politeShare >= 0.99,
      detail: `greedy ok ${redis.greedy.ok} (one quota: ${redis.quotaRequests}; with per-replica quotas it got ${memory.greedy.ok}), polite ok ${(politeShare * 100).toFixed(1)} %`,
    },
  ];
  if (o.json) {
    const strip = ({ results: _results, ...rest }: ScaleOutRecord) => rest;
    process.stdout.write(`${JSON.stringify({ scaleOut: records.map(strip), targets }, null, 2)}\n`);
  } else {
    const rows = [
      [
        'quotas',
        'replicas',
        'greedy sent',
        'greedy ok',
        'one quota allows',
        'greedy 429',
        'polite ok',
      ],
    ];
    for (const r of records) {
      rows.push([
        r.quotas,
        String(r.replicas),
        String(r.greedy.sent),
        String(r.greedy.ok),
        String(r.quotaRequests),
        String(r.greedy.rejected429),
        `${r.polite.ok} of ${r.polite.sent}`,
      ]);
    }
    process.stdout.write(
      `\nscale-out: one greedy client at 400 req/s and 100 clients at 1 req/s, split round-robin over ${replicas} replicas (${redis.durationMs / 1000} s)\n${alignColumns(rows)}\n\nTargets:\n`,
    );
    for (const t of targets)
      process.stdout.write(`  ${t.pass ? '✓' : '✗'} ${t.name}: ${t.detail}\n`);
  }
  if (o.report !== undefined) {
    await writeReport(o.report, {
      title: 'Spillway demo at scale: per-client quotas across replicas',
      subtitle: `${replicas} bounded replicas behind a round-robin split; quotas per replica (memory) vs shared in Redis.`,
      runs: records.flatMap((r) => r.results),
      notes: targets.map((t) => `${t.pass ? '✓' : '✗'} ${t.name}: ${t.detail}`),
    });
    o.log(`\nreport: ${o.report}`);
  }
  return 0;
}

function list(flag: string, value: string, allowed: readonly string[]): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const item of items) {
    if (!allowed.includes(item))
      throw new UsageError(`--${flag}: '${item}' is not one of ${allowed.join(', ')}`);
  }
  if (items.length === 0)
    throw new UsageError(`--${flag} needs at least one of ${allowed.join(', ')}`);
  return items;
}

async function runOne(
  run: {
    readonly scenario: Scenario;
    readonly server: ServerName;
    readonly target: ServerProcess;
    readonly nextRequestDeadlineMs: number;
  },
  log: (line: string) => void,
): Promise<RunRecord> {
  const { scenario, server, target } = run;
  // Warm both sides up (JIT, connections) just under capacity and let the server go idle, so a
  // cold process does not charge its start-up to the first second; then time a request on it.
  await runLoad({
    url: `${target.url}/warmup`,
    ratePerSec: 300,
    durationMs: 1_000,
    deadlineMs: callerDeadlineMs,
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const unloadedMs = await medianRequestMs(`${target.url}/unloaded`, 5);
  const idle = await target.stats();
  const progress = progressReporter(process.stderr, 1);
  // The probe is its own run, started 100 ms after the rush's schedule ends, so the rush's
  // figures stay its own.
  const probe = scenario.nextRequest
    ? new Promise<LoadResult>((resolve, reject) => {
        setTimeout(() => {
          runLoad({
            url: `${target.url}/next`,
            durationMs: 1,
            groups: [
              {
                name: 'next request',
                ratePerSec: 1_000,
                maxRequests: 1,
                deadlineMs: run.nextRequestDeadlineMs,
              },
            ],
            headers: { 'x-client-id': 'latecomer' },
          }).then(resolve, reject);
        }, scenario.durationMs + 100);
      })
    : undefined;
  const result = await runLoad({
    url: `${target.url}/work`,
    durationMs: scenario.durationMs,
    groups: scenario.groups,
    scenario: scenario.id,
    series: server,
    label: `${scenario.id} · ${server}`,
    onWindow: ({ totals }) => progress.update(totals),
  });
  progress.finish();
  const next = probe === undefined ? undefined : probeOutcome(await probe);
  const after = await target.stats();
  const ok = sum(result.groups, (g) => g.ok);
  const sent = sum(result.groups, (g) => g.sent);
  log(
    `  ${server.padEnd(8)} G ${goodputFraction(result).toFixed(2)}  ok ${ok}/${sent}  ` +
      `ok p99 ${formatMs(result.totals.latencyMs.ok?.p99)}  next request ${nextRequestText(next)}` +
      (result.validity.valid ? '' : `  [not valid: ${result.validity.reasons.join('; ')}]`),
  );
  return {
    scenario,
    server,
    result,
    next,
    unloadedMs,
    idleRssBytes: idle.rssBytes,
    peakRssBytes: after.maxRssBytes,
  };
}

function medianRequestMs(url: string, n: number): Promise<number> {
  const once = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const req = request(url, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - t0));
      });
      req.on('error', reject);
      req.end();
    });
  return (async () => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) times.push(await once());
    times.sort((a, b) => a - b);
    return times[Math.floor(n / 2)]!;
  })();
}

function sum(groups: readonly GroupStats[], f: (g: GroupStats) => number): number {
  return groups.reduce((total, g) => total + f(g), 0);
}

/** Goodput of the run ÷ capacity. */
function goodputFraction(result: LoadResult): number {
  return result.totals.goodputPerSec / capacityPerSec;
}

function probeOutcome(result: LoadResult): NextRequest {
  const g = result.totals;
  const outcome =
    (['ok', 'rejected', 'error', 'timeout', 'network'] as const).find((o) => g[o] > 0) ?? 'dropped';
  const summary = outcome === 'dropped' ? undefined : g.latencyMs[outcome];
  return { ms: summary?.max ?? null, outcome };
}

function nextRequestText(n: NextRequest | undefined): string {
  if (n === undefined) return '—';
  if (n.outcome === 'timeout') return `> ${formatMs(n.ms)} (gave up)`;
  return n.outcome === 'ok' ? formatMs(n.ms) : `${formatMs(n.ms)} (${n.outcome})`;
}

const mb = (bytes: number): string => `${Math.round(bytes / 1_048_576)} MB`;

function rejectionP99(g: GroupStats): number | undefined {
  return g.latencyMs.rejected?.p99;
}

function formatSummary(records: readonly RunRecord[], targets: readonly Target[]): string {
  const out: string[] = [];
  for (const id of [...new Set(records.map((r) => r.scenario.id))]) {
    const runs = records.filter((r) => r.scenario.id === id);
    out.push('', `${id}: ${runs[0]!.scenario.title}`);
    const rows: string[][] = [
      [
        'server',
        'group',
        'sent',
        'ok',
        'G',
        'ok p50',
        'ok p99',
        '429',
        '503',
        'timeouts',
        'refusal p99',
        'peak RSS',
        'next request',
      ],
    ];
    for (const r of runs) {
      const groups = r.result.groups;
      for (const [i, g] of groups.entries()) {
        rows.push([
          i === 0 ? `${r.server}${r.result.validity.valid ? '' : ' (!)'}` : '',
          g.name,
          String(g.sent),
          String(g.ok),
          (g.goodputPerSec / capacityPerSec).toFixed(2),
          formatMs(g.latencyMs.ok?.p50),
          formatMs(g.latencyMs.ok?.p99),
          String(g.rejectedByStatus['429'] ?? 0),
          String(g.rejectedByStatus['503'] ?? 0),
          String(g.timeout),
          formatMs(rejectionP99(g)),
          i === 0 ? mb(r.peakRssBytes) : '',
          i === 0 ? nextRequestText(r.next) : '',
        ]);
      }
    }
    out.push(alignColumns(rows));
  }
  if (records.some((r) => !r.result.validity.valid)) {
    out.push(
      '',
      '(!) not valid: the generator fell behind its schedule or the machine was busy; read those rows with care.',
    );
  }
  out.push('', 'Targets:');
  for (const t of targets) out.push(`  ${t.pass ? '✓' : '✗'} ${t.name}: ${t.detail}`);
  return out.join('\n');
}

/** The targets, checked against what was measured. */
function checkTargets(records: readonly RunRecord[]): Target[] {
  const find = (scenario: string, server: ServerName) =>
    records.find((r) => r.scenario.id === scenario && r.server === server);
  const targets: Target[] = [];
  const naive = find('reference', 'naive');
  if (naive !== undefined) {
    const g = goodputFraction(naive.result);
    const next = naive.next;
    targets.push({
      name: 'naive collapses at the reference load',
      pass: g < 0.6 && (next?.ms ?? 0) > 1_000,
      detail: `G ${g.toFixed(2)} (< 0.6 expected), next request ${nextRequestText(naive.next)} (> 1 s expected)`,
    });
  }
  const ref = find('reference', 'bounded');
  if (ref !== undefined) {
    const g = goodputFraction(ref.result);
    const p99 = ref.result.groups[0]!.latencyMs.ok?.p99 ?? Infinity;
    const next = ref.next;
    const nextOk = next?.outcome === 'ok' && (next.ms ?? Infinity) <= 2 * ref.unloadedMs;
    targets.push({
      name: 'Spillway holds at the reference load',
      pass: g >= 0.99 && p99 <= 80 && nextOk,
      detail: `G ${g.toFixed(2)} (≥ 0.99), ok p99 ${formatMs(p99)} (≤ 80 ms), next request ${nextRequestText(ref.next)} (≤ 2 × unloaded ${formatMs(ref.unloadedMs)})`,
    });
  }
  const greedy = find('greedy', 'bounded');
  if (greedy !== undefined) {
    const polite = greedy.result.groups.find((g) => g.name === 'polite');
    const hog = greedy.result.groups.find((g) => g.name === 'greedy');
    if (polite !== undefined && hog !== undefined) {
      const share = polite.sent > 0 ? polite.ok / polite.sent : 0;
      const seconds = greedy.scenario.durationMs / 1000;
      const quota = 150 * seconds + 15;
      targets.push({
        name: 'well-behaved clients get through while the greedy one is held to its quota',
        pass: share >= 0.99 && hog.ok <= quota * 1.02,
        detail: `polite ok ${(share * 100).toFixed(1)} % (≥ 99 %), greedy ok ${hog.ok} of ${hog.sent} (quota ${Math.round(quota)})`,
      });
    }
  }
  const tenX = find('10x', 'bounded');
  if (tenX !== undefined) {
    const g = goodputFraction(tenX.result);
    const main = tenX.result.groups[0]!;
    const p99 = main.latencyMs.ok?.p99 ?? Infinity;
    const refusal = rejectionP99(main) ?? Infinity;
    const growth = tenX.peakRssBytes - tenX.idleRssBytes;
    targets.push({
      name: 'Spillway holds at 10× capacity',
      pass: g >= 0.99 && p99 <= 80 && refusal <= 5 && growth <= 64 * 1_048_576,
      detail: `G ${g.toFixed(2)} (≥ 0.99), ok p99 ${formatMs(p99)} (≤ 80 ms), refusal p99 ${formatMs(refusal)} (≤ 5 ms), RSS +${mb(growth)} over idle (≤ 64 MB)`,
    });
  }
  return targets;
}

function toJson(
  records: readonly RunRecord[],
  targets: readonly Target[],
  setup: { readonly quick: boolean; readonly framework: string; readonly pinned: boolean },
) {
  return {
    ...setup,
    capacityPerSec,
    machine: records[0]?.result.machine ?? null,
    runs: records.map((r) => ({
      scenario: r.scenario.id,
      server: r.server,
      valid: r.result.validity.valid,
      invalidReasons: r.result.validity.reasons,
      goodput: goodputFraction(r.result),
      unloadedMs: r.unloadedMs,
      idleRssBytes: r.idleRssBytes,
      peakRssBytes: r.peakRssBytes,
      nextRequest: r.next ?? null,
      groups: r.result.groups.map((g) => ({
        name: g.name,
        sent: g.sent,
        ok: g.ok,
        goodput: g.goodputPerSec / capacityPerSec,
        okP50Ms: g.latencyMs.ok?.p50 ?? null,
        okP99Ms: g.latencyMs.ok?.p99 ?? null,
        rejectedByStatus: g.rejectedByStatus,
        timeouts: g.timeout,
        errors: g.error,
        network: g.network,
        dropped: g.dropped,
        rejectionP99Ms: rejectionP99(g) ?? null,
      })),
    })),
    targets,
  };
}
