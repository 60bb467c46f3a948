// Needs: redis-server installed (private servers on free ports, killed mid-test).
// The shared penalty box with its Redis gone, under each failure policy of its store: `closed`
// refuses everyone while the feed cannot be read, `open` keeps what it knew and drops new
// violations, `local` escalates on this replica's own; `suspend` and `lift` reject. A Redis
// that comes back empty (no persistence) is read again from the start: what it lost is gone
// here too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PenaltyStepEvent } from '../../src/index.js';
import {
  redisPenaltyBox,
  redisStore,
  StoreUnavailableError,
  type FailurePolicy,
  type RedisPenaltyBox,
} from '../../src/redis/index.js';
import {
  connect,
  eventually,
  mainFlavours,
  PrivateRedis,
  redisServerMissing,
  type TestClient,
} from './helpers.js';

const missing = redisServerMissing();
if (missing !== undefined) console.warn(`skipping shared penalty box fault tests: ${missing}`);

describe.skipIf(missing !== undefined).each(mainFlavours)(
  'redisPenaltyBox with Redis down, over %s',
  (flavour) => {
    let server: PrivateRedis;
    let c: TestClient;
    const boxes: RedisPenaltyBox[] = [];
    let n = 0;

    beforeAll(async () => {
      server = await PrivateRedis.start();
      c = await connect(flavour, server.port);
    });
    afterAll(async () => {
      for (const box of boxes) box.close();
      await c?.close();
      await server?.stop();
    });

    const make = (onError: FailurePolicy) => {
      const store = redisStore({ client: c.client, prefix: 'pbf', timeoutMs: 500, onError });
      const box = redisPenaltyBox({
        store,
        name: `box${n++}`,
        threshold: 3,
        windowMs: 60_000,
        graceMs: 0,
        steps: [{ waitMs: 60_000 }, { waitMs: 120_000, block: true }],
        syncMs: 600_000,
      });
      boxes.push(box);
      return box;
    };

    /** Three violations by `key` (after a refusal), and the step event they cause, if any. */
    const hammer = (box: RedisPenaltyBox, key: string) => {
      const moved = new Promise<PenaltyStepEvent>((resolve) => box.onStepChange(resolve));
      box.refused(key, 60_000);
      for (let i = 0; i < 3; i++) box.check(key);
      return moved;
    };

    const down = async () => {
      await server.kill();
      await eventually('the client sees it', () =>
        c.command(['PING']).then(
          () => false,
          () => true,
        ),
      );
    };
    const up = async () => {
      await server.startAgain();
      await eventually('the client is back', async () => (await c.command(['PING'])) === 'PONG');
    };

    it('each policy, while down and once back', async () => {
      const closed = make('closed');
      const open = make('open');
      const local = make('local');
      await Promise.all([closed.sync(), open.sync(), local.sync()]);
      await hammer(open, 'known');
      expect(open.check('known')?.reason).toBe('penalty');
      await down();
      for (const box of [closed, open, local]) expect(await box.sync()).toBe(false);

      // closed: everyone refused, 503 "retry elsewhere" (not this client's fault).
      expect(closed.check('anyone')).toMatchObject({ reason: 'store-unavailable', step: 0 });
      // open: what it knew still holds; new violations are dropped.
      expect(open.check('known')?.reason).toBe('penalty');
      open.refused('new', 60_000);
      for (let i = 0; i < 10; i++) open.check('new');
      // local: this replica escalates on its own violations.
      expect(await hammer(local, 'new')).toMatchObject({ step: 1, by: 'violations' });
      expect(local.check('new')?.reason).toBe('penalty');
      // operators are told, whatever the policy
      await expect(open.suspend('x')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(local.lift('x')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(open.check('new')).toBeUndefined();

      // Back, but empty: each box reads everything again, and what Redis lost is gone here.
      await up();
      await eventually('closed reads the feed', () => closed.sync());
      expect(closed.check('anyone')).toBeUndefined();
      await eventually('open reads the feed', () => open.sync());
      expect(open.check('known')).toBeUndefined();
    });
  },
);
