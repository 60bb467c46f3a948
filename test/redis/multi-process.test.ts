// Three Node processes share one Redis, each offering one quota's worth of load (3× in
// total), through the built package. Invariants are checked from what each process saw:
// a fixed window admits exactly its limit in every full window, GCRA admits no more than
// burst + rate × time, and the semaphore never lets more than its limit hold the resource.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKey } from '../../src/redis/index.js';
import {
  cleanup,
  connect,
  mainFlavours,
  sharedRedisMissing,
  uniquePrefix,
  type Flavour,
  type TestClient,
} from './helpers.js';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const replica = new URL('fixtures/replica.mjs', import.meta.url).pathname;
const built = existsSync(`${root}dist/redis/index.js`);
const missing =
  (await sharedRedisMissing()) ??
  (built ? undefined : 'dist/redis is not built (run npm run build first)');
if (missing !== undefined) console.warn(`skipping multi-process Redis tests: ${missing}`);

interface Seen {
  offered: number;
  admitted: [number, number, number][] | number[];
  degraded: number;
  maxHeld?: number;
}

async function replicas(flavour: Flavour, config: Record<string, unknown>): Promise<Seen[]> {
  const startAt = Date.now() + 1_500; // after every process has connected
  const procs = [0, 1, 2].map(() =>
    run(process.execPath, [replica, JSON.stringify({ ...config, flavour, port: 6379, startAt })], {
      timeout: 20_000,
    }),
  );
  return (await Promise.all(procs)).map(({ stdout }) => JSON.parse(stdout) as Seen);
}

describe.skipIf(missing !== undefined).each(mainFlavours)('3 processes over %s', (flavour) => {
  let c: TestClient;
  const prefixes: string[] = [];
  const prefix = (label: string): string => {
    const p = uniquePrefix(`mp-${flavour}-${label}`);
    prefixes.push(p);
    return p;
  };
  beforeAll(async () => {
    c = await connect(flavour);
  });
  afterAll(async () => {
    for (const p of prefixes) await cleanup(c, p);
    await c.close();
  });

  it('fixed window: exactly the quota in every full window, never more in any', async () => {
    const limit = 200;
    const windowMs = 1_000;
    const seen = await replicas(flavour, {
      mode: 'fixed',
      prefix: prefix('fw'),
      limit,
      windowMs,
      offerPerSec: (limit * 1000) / windowMs, // each process offers one quota: 3× in total
      durationMs: 3_600,
    });
    const perWindow = new Map<number, number>();
    let first = Infinity;
    let last = -Infinity;
    for (const s of seen) {
      expect(s.degraded).toBe(0);
      for (const [sentAt, recvAt, resetMs] of s.admitted as [number, number, number][]) {
        // Redis ran the script between send and receive; its window ends resetMs later, on
        // a multiple of windowMs (same machine, same clock).
        expect(recvAt - sentAt).toBeLessThan(windowMs);
        const end = Math.ceil((sentAt + resetMs - 1) / windowMs) * windowMs;
        const w = end / windowMs - 1;
        perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
        first = Math.min(first, sentAt);
        last = Math.max(last, recvAt);
      }
    }
    const full = [...perWindow.keys()].filter(
      (w) => w * windowMs > first && (w + 1) * windowMs < last,
    );
    expect(full.length).toBeGreaterThanOrEqual(2);
    for (const [w, count] of perWindow) {
      if (full.includes(w)) expect(count, `window ${w}`).toBe(limit);
      else expect(count, `window ${w}`).toBeLessThanOrEqual(limit);
    }
  });

  it('GCRA: admits no more than burst + rate × time', async () => {
    const ratePerSec = 200;
    const burst = 20;
    const seen = await replicas(flavour, {
      mode: 'gcra',
      prefix: prefix('gcra'),
      ratePerSec,
      burst,
      offerPerSec: ratePerSec,
      durationMs: 2_000,
    });
    const admitted = seen.flatMap((s) => s.admitted as [number, number, number][]);
    const firstSent = Math.min(...admitted.map((a) => a[0]));
    const lastRecv = Math.max(...admitted.map((a) => a[1]));
    const bound = burst + (ratePerSec * (lastRecv - firstSent)) / 1000;
    expect(admitted.length).toBeLessThanOrEqual(Math.floor(bound));
    for (const s of seen) expect(s.degraded).toBe(0);
    // And not grossly under: at least half of what 2 s at the rate allows.
    expect(admitted.length).toBeGreaterThan(0.5 * (burst + ratePerSec * 2));
  });

  it('semaphore: never more than its limit held at once (checked by fence holders)', async () => {
    const limit = 5;
    const p = prefix('sem');
    const seen = await replicas(flavour, {
      mode: 'sem',
      prefix: p,
      limit,
      workers: 4,
      durationMs: 1_500,
    });
    const fences = seen.flatMap((s) => s.admitted as number[]);
    expect(new Set(fences).size).toBe(fences.length);
    expect(fences.length).toBeGreaterThan(50);
    for (const s of seen) expect(s.maxHeld).toBeLessThanOrEqual(limit);
    expect(Math.max(...seen.map((s) => s.maxHeld ?? 0))).toBeGreaterThanOrEqual(limit - 1);
    // Every lease was given back: nothing held, nothing leaked.
    const scope = { name: 'sem', id: '' };
    expect(Number(await c.command(['ZCARD', redisKey(p, scope, 'sem:z')]))).toBe(0);
    expect(Number(await c.command(['HGET', redisKey(p, scope, 'sem:h'), '#sum']))).toBe(0);
  });
});
