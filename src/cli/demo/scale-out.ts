/**
 * The demo at scale (issue: scale out): the greedy scenario against several bounded replicas
 * behind a round-robin split of the same load, once with per-replica (memory) quotas and once
 * with quotas shared in Redis. With memory quotas a client gets its quota from every replica;
 * with Redis it gets it once.
 *
 * @module
 */
import {
  alignColumns,
  runLoad,
  writeReport,
  type GroupStats,
  type LoadResult,
} from '../../load/index.js';
import { UsageError } from '../command.js';
import { exitCodeOf, targetLine, type Target } from './records.js';
import { callerDeadlineMs } from './scenarios.js';
import { startServer, type ServerProcess } from './server-process.js';

/** The quota the bounded server gives each client: 150/s with a burst of 15. */
export const quotaPerSec = 150;
const quotaBurst = 15;

/** One configuration's outcome, summed over its replicas. */
export interface ScaleOutRecord {
  readonly quotas: 'memory' | 'redis';
  readonly replicas: number;
  readonly durationMs: number;
  readonly greedy: { readonly sent: number; readonly ok: number; readonly rejected429: number };
  readonly polite: { readonly sent: number; readonly ok: number };
  /** What a client may get in the whole run from one shared quota: 150/s × duration + 15. */
  readonly quotaRequests: number;
  readonly results: readonly LoadResult[];
}

/** Runs both configurations. */
export async function scaleOut(options: {
  readonly redisUrl: string;
  readonly replicas: number;
  readonly quick: boolean;
  readonly serverCpu: number | undefined;
  readonly log: (line: string) => void;
}): Promise<ScaleOutRecord[]> {
  const { replicas, log } = options;
  const durationMs = options.quick ? 3_000 : 5_000;
  const records: ScaleOutRecord[] = [];
  // A prefix of its own per run, so keys left by an earlier run cannot count.
  const prefix = `spillway-demo-${process.pid}-${Date.now().toString(36)}`;
  for (const quotas of ['memory', 'redis'] as const) {
    log(`\nscale-out, ${quotas} quotas: ${replicas} bounded replicas, load split round-robin`);
    const servers: ServerProcess[] = [];
    try {
      for (let i = 0; i < replicas; i++) {
        const args = ['bounded'];
        if (quotas === 'redis') {
          args.push(
            '--redis',
            options.redisUrl,
            '--redis-prefix',
            prefix,
            '--replicas',
            String(replicas),
          );
        }
        servers.push(await startServer(args, options.serverCpu));
      }
      await Promise.all(
        servers.map((s) =>
          runLoad({
            url: `${s.url}/warmup`,
            ratePerSec: 300 / replicas,
            durationMs: 1_000,
            deadlineMs: callerDeadlineMs,
          }),
        ),
      );
      // Each replica gets a 1/N share of every stream: the same clients, spread evenly.
      const results = await Promise.all(
        servers.map((s, i) =>
          runLoad({
            url: `${s.url}/work`,
            durationMs,
            scenario: `scale-out · replica ${i + 1}`,
            series: `${quotas} quotas`,
            label: `scale-out · ${quotas} quotas · replica ${i + 1}`,
            groups: [
              {
                name: 'greedy',
                ratePerSec: 400 / replicas,
                headers: { 'x-client-id': 'greedy' },
                deadlineMs: callerDeadlineMs,
              },
              {
                name: 'polite',
                ratePerSec: 100 / replicas,
                clients: 100,
                headers: { 'x-client-id': 'polite-{client}' },
                deadlineMs: callerDeadlineMs,
              },
            ],
          }),
        ),
      );
      const sum = (name: string, f: (g: GroupStats) => number): number =>
        results.reduce((total, r) => total + f(r.groups.find((g) => g.name === name)!), 0);
      const record: ScaleOutRecord = {
        quotas,
        replicas,
        durationMs,
        greedy: {
          sent: sum('greedy', (g) => g.sent),
          ok: sum('greedy', (g) => g.ok),
          rejected429: sum('greedy', (g) => g.rejectedByStatus['429'] ?? 0),
        },
        polite: { sent: sum('polite', (g) => g.sent), ok: sum('polite', (g) => g.ok) },
        quotaRequests: (quotaPerSec * durationMs) / 1000 + quotaBurst,
        results,
      };
      log(
        `  greedy ok ${record.greedy.ok} of ${record.greedy.sent} (one quota allows ${record.quotaRequests}); ` +
          `polite ok ${record.polite.ok} of ${record.polite.sent}`,
      );
      records.push(record);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }
  return records;
}

/** The `--redis` mode of the demo: runs both configurations, prints, reports. */
export async function runScaleOut(o: {
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
  // In per cent, to the one decimal it is printed with.
  const politeShare =
    redis.polite.sent === 0 ? 0 : Math.round((redis.polite.ok / redis.polite.sent) * 1_000) / 10;
  const targets: Target[] = [
    {
      name: 'per-client quotas hold across replicas with Redis',
      pass: redis.greedy.ok <= redis.quotaRequests * 1.01 && politeShare >= 99,
      judged: records.every((r) => r.results.every((result) => result.validity.valid)),
      detail: `greedy ok ${redis.greedy.ok} (one quota: ${redis.quotaRequests}; with per-replica quotas it got ${memory.greedy.ok}), polite ok ${politeShare.toFixed(1)} % (≥ 99 %)`,
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
    for (const t of targets) process.stdout.write(`  ${targetLine(t)}\n`);
  }
  if (o.report !== undefined) {
    await writeReport(o.report, {
      title: 'Spillway demo at scale: per-client quotas across replicas',
      subtitle: `${replicas} bounded replicas behind a round-robin split; quotas per replica (memory) vs shared in Redis.`,
      // Quotas are about the polite clients next to the greedy one: their goodput comes first.
      runs: records.flatMap((r) => r.results.map((result) => ({ ...result, leadGroup: 'polite' }))),
      notes: targets.map(targetLine),
    });
    o.log(`\nreport: ${o.report}`);
  }
  return exitCodeOf(targets);
}
