// Three Node processes share one Redis (or one Redis Cluster), each offering one quota's worth
// of load (3× in total), through the built package. Invariants are checked from what each
// process saw: a fixed window admits exactly its limit in every full window, GCRA admits no
// more than burst + rate × time, and the semaphore never lets more than its limit hold the
// resource. Registered inside a describe by each target.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisKey } from '../../src/redis/index.js';
import { cleanup, uniquePrefix, type TestClient } from './helpers.js';

const run = promisify(execFile);
const replica = new URL('fixtures/replica.mjs', import.meta.url).pathname;

/** The client each replica process connects with (see fixtures/replica.mjs). */
export type ReplicaFlavour = 'ioredis6' | 'node-redis6';

/** What the three processes run against. */
export interface ReplicaTarget {
  /** Names the keys' prefix. */
  readonly label: string;
  /** The flavour of each of the three processes. */
  readonly flavours: readonly [ReplicaFlavour, ReplicaFlavour, ReplicaFlavour];
  /** Where they connect: a Redis's port, or the ports of a cluster's nodes. */
  where(): { readonly port: number } | { readonly cluster: readonly number[] };
  /** A client for checking keys afterwards (routed by key on a cluster); the suite closes it. */
  admin(): Promise<TestClient>;
  /** Delete the suite's keys after (the shared Redis); a private cluster goes away anyway. */
  readonly cleanup: boolean;
}

interface Seen {
  offered: number;
  admitted: [number, number, number][] | number[];
  degraded: number;
  maxHeld?: number;
}

/** Registers the three-replica cases for `target` in the enclosing describe. */
export function threeReplicaQuotaCases(target: ReplicaTarget): void {
  let c: TestClient;
  const prefixes: string[] = [];
  const prefix = (label: string): string => {
    const p = uniquePrefix(`mp-${target.label.replaceAll(' ', '-')}-${label}`);
    prefixes.push(p);
    return p;
  };
  beforeAll(async () => {
    c = await target.admin();
  });
  afterAll(async () => {
    if (c === undefined) return;
    if (target.cleanup) for (const p of prefixes) await cleanup(c, p);
    await c.close();
  });

  // The three runs, one after another, in one trio of processes (each start-up costs seconds
  // on a busy machine): started by the first case that asks, each from its own start instant.
  const runs = {
    fixed: {
      mode: 'fixed',
      prefix: prefix('fw'),
      limit: 200,
      windowMs: 1_000,
      offerPerSec: 200, // each process offers one quota: 3× in total
      durationMs: 3_600,
    },
    gcra: {
      mode: 'gcra',
      prefix: prefix('gcra'),
      ratePerSec: 200,
      burst: 20,
      offerPerSec: 200,
      durationMs: 2_000,
    },
    sem: { mode: 'sem', prefix: prefix('sem'), limit: 5, workers: 4, durationMs: 1_500 },
  } as const;
  let all: Promise<Record<keyof typeof runs, Seen[]>> | undefined;
  async function startAll(): Promise<Record<keyof typeof runs, Seen[]>> {
    let at = Date.now() + 2_000; // after every process has connected
    const planned = Object.values(runs).map((r) => {
      const startAt = at;
      at += r.durationMs + 750; // and finished the run before
      return { ...r, startAt };
    });
    const where = target.where();
    const procs = target.flavours.map((flavour) =>
      run(process.execPath, [replica, JSON.stringify({ runs: planned, ...where, flavour })], {
        timeout: 45_000,
      }),
    );
    const outs = (await Promise.all(procs)).map(({ stdout }) => JSON.parse(stdout) as Seen[]);
    return {
      fixed: outs.map((o) => o[0]!),
      gcra: outs.map((o) => o[1]!),
      sem: outs.map((o) => o[2]!),
    };
  }
  const replicas = async (which: keyof typeof runs): Promise<Seen[]> =>
    (await (all ??= startAll()))[which];
  const timeout = 60_000;

  it(
    'fixed window: exactly the quota in every full window, never more in any',
    async () => {
      const { limit, windowMs } = runs.fixed;
      const seen = await replicas('fixed');
      const perWindow = new Map<number, number>();
      // Admissions that may have fallen in any window of a range [a, b].
      const unsure: [number, number][] = [];
      let first = Infinity;
      let last = -Infinity;
      for (const s of seen) {
        expect(s.degraded).toBe(0);
        for (const [sentAt, recvAt, resetMs] of s.admitted as [number, number, number][]) {
          // Redis ran the script between send and receive; its window ends resetMs later, on
          // a multiple of windowMs (same machine, same clock, resetMs in whole ms). A reply
          // slower than a window (a starved process on a busy machine) may leave two
          // multiples in that span, and the admission is in one of those windows.
          const lo = Math.ceil((sentAt + resetMs - 1) / windowMs) - 1;
          const hi = Math.max(lo, Math.floor((recvAt + resetMs + 1) / windowMs) - 1);
          if (hi > lo) unsure.push([lo, hi]);
          else perWindow.set(lo, (perWindow.get(lo) ?? 0) + 1);
          for (let w = lo; w <= hi; w++) if (!perWindow.has(w)) perWindow.set(w, 0);
          first = Math.min(first, sentAt);
          last = Math.max(last, recvAt);
        }
      }
      const full = [...perWindow.keys()].filter(
        (w) => w * windowMs > first && (w + 1) * windowMs < last,
      );
      expect(full.length).toBeGreaterThanOrEqual(2);
      for (const [w, count] of perWindow) {
        expect(count, `window ${w}`).toBeLessThanOrEqual(limit);
      }
      // Windows an unsure admission joins are judged together: in each run of joined windows,
      // exactly the limit per window when all are full, never more in any case.
      const joined = (w: number): boolean => unsure.some(([a, b]) => w >= a && w < b);
      const windows = [...perWindow.keys()].sort((a, b) => a - b);
      for (let i = 0; i < windows.length;) {
        let j = i;
        while (joined(windows[j]!) && windows[j + 1] === windows[j]! + 1) j++;
        const group = windows.slice(i, j + 1);
        const inGroup = (w: number): boolean => w >= group[0]! && w <= group.at(-1)!;
        const total =
          group.reduce((t, w) => t + perWindow.get(w)!, 0) +
          unsure.filter(([a]) => inGroup(a)).length;
        const what = `windows ${group.join(', ')}`;
        if (group.every((w) => full.includes(w))) expect(total, what).toBe(limit * group.length);
        else expect(total, what).toBeLessThanOrEqual(limit * group.length);
        i = j + 1;
      }
    },
    timeout,
  );

  it(
    'GCRA: admits no more than burst + rate × time',
    async () => {
      const { ratePerSec, burst } = runs.gcra;
      const seen = await replicas('gcra');
      const admitted = seen.flatMap((s) => s.admitted as [number, number, number][]);
      const firstSent = Math.min(...admitted.map((a) => a[0]));
      const lastRecv = Math.max(...admitted.map((a) => a[1]));
      const bound = burst + (ratePerSec * (lastRecv - firstSent)) / 1000;
      expect(admitted.length).toBeLessThanOrEqual(Math.floor(bound));
      for (const s of seen) expect(s.degraded).toBe(0);
      // And not grossly under: at least half of what 2 s at the rate allows.
      expect(admitted.length).toBeGreaterThan(0.5 * (burst + ratePerSec * 2));
    },
    timeout,
  );

  it(
    'semaphore: never more than its limit held at once (checked by fence holders)',
    async () => {
      const { limit, prefix: p } = runs.sem;
      const seen = await replicas('sem');
      const fences = seen.flatMap((s) => s.admitted as number[]);
      expect(new Set(fences).size).toBe(fences.length);
      expect(fences.length).toBeGreaterThan(50);
      for (const s of seen) expect(s.maxHeld).toBeLessThanOrEqual(limit);
      expect(Math.max(...seen.map((s) => s.maxHeld ?? 0))).toBeGreaterThanOrEqual(limit - 1);
      // Every lease was given back: nothing held, nothing leaked.
      const scope = { name: 'sem', id: '' };
      expect(Number(await c.command(['ZCARD', redisKey(p, scope, 'lease:z')]))).toBe(0);
      expect(Number(await c.command(['HGET', redisKey(p, scope, 'lease:h'), '#sum']))).toBe(0);
    },
    timeout,
  );
}
