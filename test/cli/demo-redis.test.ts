// `spillway demo --redis … --replicas 3` as a user runs it (needs Redis on 127.0.0.1:6379,
// which .ci/run starts): three bounded replicas behind a round-robin split hold one client to
// ONE quota when the quota lives in Redis, and to three quotas when each replica keeps its own.
import { describe, expect, it } from 'vitest';
import { demoJson } from '../helpers/demo.js';
import { sharedRedisMissing } from '../redis/helpers.js';

const missing = await sharedRedisMissing();
if (missing !== undefined) console.warn(`skipping the demo at scale: ${missing}`);

interface ScaleOutJson {
  scaleOut: {
    quotas: 'memory' | 'redis';
    greedy: { sent: number; ok: number; rejected429: number };
    polite: { sent: number; ok: number };
    quotaRequests: number;
  }[];
  targets: { pass: boolean; judged: boolean; detail: string }[];
}

describe.skipIf(missing !== undefined)('spillway demo --redis --replicas 3', () => {
  it(
    'holds a client to one quota across replicas through Redis',
    { timeout: 120_000 },
    async () => {
      const out = await demoJson<ScaleOutJson>(
        [
          '--redis',
          'redis://127.0.0.1:6379',
          '--replicas',
          '3',
          '--quick',
          '--json',
          '--no-report',
        ],
        110_000,
      );
      const memory = out.scaleOut.find((r) => r.quotas === 'memory')!;
      const redis = out.scaleOut.find((r) => r.quotas === 'redis')!;
      console.log(
        `demo at scale: greedy ok with per-replica quotas ${memory.greedy.ok}, with Redis ${redis.greedy.ok} (one quota: ${redis.quotaRequests})`,
      );
      // The bound holds for a run that kept its schedule. On a machine too busy for that (the
      // demo then says the run is not valid and does not judge it), requests go out late, the
      // run lasts longer than planned and the quota refills for longer: only the ordering is
      // asked of such a run.
      if (out.targets[0]!.judged) {
        expect(redis.greedy.ok).toBeLessThanOrEqual(redis.quotaRequests * 1.01);
      } else {
        console.warn('demo at scale: not a valid run (busy machine); the 1 % bound not judged');
      }
      expect(redis.greedy.ok).toBeGreaterThan(redis.quotaRequests * 0.9);
      expect(memory.greedy.ok).toBeGreaterThan(redis.quotaRequests * 2);
      expect(redis.polite.ok / redis.polite.sent).toBeGreaterThanOrEqual(0.99);
    },
  );
});
