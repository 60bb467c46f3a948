import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpillwayConfigError } from '../index.js';
import { SimEventsFullError, simulate, type RetryPolicy, type SimulationOptions } from './index.js';

const base: SimulationOptions = {
  seed: 7,
  durationMs: 5_000,
  drainMs: 2_000,
  nodes: [
    {
      name: 'api',
      slots: 4,
      serviceTime: { kind: 'exponential', meanMs: 20 },
      maxQueue: 20,
      calls: [{ to: 'db', retry: { kind: 'spillway', options: { timeoutMs: 100 } } }],
    },
    {
      name: 'db',
      slots: 2,
      serviceTime: {
        kind: 'histogram',
        buckets: [
          { upToMs: 5, count: 80 },
          { upToMs: 50, count: 20 },
        ],
      },
      maxQueue: 10,
      capacityChanges: [
        { atMs: 2_000, slots: 1 },
        { atMs: 3_000, slots: 2 },
      ],
    },
  ],
  clients: [
    {
      name: 'users',
      to: 'api',
      deadlineMs: 500,
      arrivals: { ratePerSec: 150 },
      retry: { kind: 'spillway' },
    },
  ],
};

/** One stream of users at `to`, arriving evenly. */
function users(
  to: string,
  ratePerSec: number,
  retry: RetryPolicy,
  deadlineMs: number,
): SimulationOptions['clients'] {
  return [{ name: 'u', to, deadlineMs, arrivals: { ratePerSec, process: 'constant' }, retry }];
}

afterEach(() => vi.restoreAllMocks());

describe('simulate', () => {
  it('gives byte-identical JSON for the same seed, and another answer for another seed', async () => {
    const a = JSON.stringify(await simulate(base));
    const b = JSON.stringify(await simulate(base));
    const c = JSON.stringify(await simulate({ ...base, seed: 8 }));
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it('never draws from Math.random (the primitives get the seeded generator)', async () => {
    const spy = vi.spyOn(Math, 'random');
    await simulate(base);
    expect(spy).not.toHaveBeenCalled();
  });

  it('answers a full line with a refusal, and counts it', async () => {
    const r = await simulate({
      durationMs: 1_000,
      nodes: [{ name: 's', slots: 1, maxQueue: 0, serviceTime: { kind: 'constant', ms: 100 } }],
      clients: users('s', 100, { kind: 'none' }, 1_000),
    });
    expect(r.nodes['s']!.refused).toBeGreaterThan(80);
    expect(r.nodes['s']!.served).toBe(10);
    expect(r.clients['u']!.succeeded).toBe(10);
  });

  it('a restart empties the line and refuses arrivals while down', async () => {
    const run = (restarts: { atMs: number; downMs: number }[]) =>
      simulate({
        seed: 1,
        durationMs: 1_000,
        drainMs: 5_000,
        nodes: [{ name: 's', slots: 1, serviceTime: { kind: 'constant', ms: 100 }, restarts }],
        clients: [
          {
            name: 'u',
            to: 's',
            deadlineMs: 10_000,
            arrivals: { ratePerSec: 20, process: 'constant' },
            retry: { kind: 'none' },
          },
        ],
      });
    const plain = (await run([])).nodes['s']!;
    const restarted = (await run([{ atMs: 500, downMs: 200 }])).nodes['s']!;
    expect(plain).toMatchObject({ received: 20, refused: 0, served: 20 });
    // At 500 ms (the restart's timer goes first), 4 served, 1 in service, 5 waiting: refused;
    // 4 arrive while down (500, 550, 600, 650 ms): refused.
    expect(restarted).toMatchObject({ received: 20, refused: 9, served: 11 });
  });

  it('counts work served after its caller gave up as wasted, and nothing when answered in time', async () => {
    const run = (timeoutMs: number, kind: 'spillway' | 'none') =>
      simulate({
        durationMs: 1_000,
        nodes: [{ name: 's', slots: 10, maxQueue: 0, serviceTime: { kind: 'constant', ms: 100 } }],
        clients: users(
          's',
          10,
          kind === 'none'
            ? { kind, timeoutMs }
            : { kind, options: { timeoutMs, retry: false, breaker: false, throttle: false } },
          1_000,
        ),
      });
    for (const kind of ['spillway', 'none'] as const) {
      const late = await run(50, kind);
      expect(late.nodes['s'], kind).toMatchObject({ received: 10, served: 10, wasted: 10 });
      expect(late.clients['u'], kind).toMatchObject({ actions: 10, failed: 10 });
      const inTime = await run(150, kind);
      expect(inTime.nodes['s'], kind).toMatchObject({ received: 10, served: 10, wasted: 0 });
      expect(inTime.clients['u'], kind).toMatchObject({ actions: 10, succeeded: 10 });
    }
  });

  it('runs a chain as deep as allowed, and retries answered at once, in a bounded stack', async () => {
    // Answers travel up by callbacks: a 1,000-node chain passes its leaf's refusal up through
    // every node in one go, and 100,000 naive attempts refused at the door follow each other.
    const n = 1_000;
    const nodes = Array.from({ length: n }, (_, i) => ({
      name: `n${i}`,
      slots: 10,
      maxQueue: 0,
      serviceTime: { kind: 'constant' as const, ms: 0.1 },
      ...(i < n - 1
        ? { calls: [{ to: `n${i + 1}`, retry: { kind: 'none' as const } }] }
        : { answer: 'refuse' as const }),
    }));
    const deep = await simulate({
      durationMs: 100,
      drainMs: 1_000,
      nodes,
      clients: users('n0', 50, { kind: 'none' }, 10_000),
    });
    expect(deep.nodes[`n${n - 1}`]!.received).toBe(5);
    expect(deep.clients['u']).toMatchObject({ actions: 5, failed: 5 });
    const retried = await simulate({
      durationMs: 1,
      drainMs: 0,
      nodes: [{ name: 's', slots: 1, maxQueue: 0, serviceTime: { kind: 'constant', ms: 1_000 } }],
      clients: users('s', 2_000, { kind: 'naive', maxAttempts: 100_000 }, 10),
    });
    expect(retried.nodes['s']!.received).toBe(1 + 100_000);
  });

  it('fails the run when the event list is full', async () => {
    await expect(simulate({ ...base, maxEvents: 5 })).rejects.toBeInstanceOf(SimEventsFullError);
  });

  it.each([
    [{ durationMs: -1 }, /`durationMs`.*-1/],
    [{ seed: 1.5 }, /`seed`.*1\.5/],
    [{ clients: [{ ...base.clients[0]!, to: 'nowhere' }] }, /`clients\[0\]\.to`.*nowhere/],
    [
      { clients: [{ ...base.clients[0]!, retry: { kind: 'twice' } }] },
      /`clients\[0\]\.retry\.kind`.*twice/,
    ],
    [
      { nodes: [{ ...base.nodes[1]!, serviceTime: { kind: 'normal' } }] },
      /`nodes\[0\]\.serviceTime\.kind`.*normal/,
    ],
    [{ nodes: [{ ...base.nodes[1]!, slots: 0 }] }, /`nodes\[0\]\.slots`.*0/],
    [{ nodes: [{ ...base.nodes[1]!, maxQueue: 2e6 }] }, /`nodes\[0\]\.maxQueue`.*2000000/],
    [
      { nodes: [{ ...base.nodes[1]!, restarts: [{ atMs: -5, downMs: 0 }] }] },
      /`nodes\[0\]\.restarts\[0\]\.atMs`.*-5/,
    ],
    [
      { clients: [{ ...base.clients[0]!, arrivals: { ratePerSec: -3 } }] },
      /`clients\[0\]\.arrivals\.ratePerSec`.*-3/,
    ],
  ])('refuses bad options by name: %j', async (patch, message) => {
    const run = simulate({ ...base, ...patch } as SimulationOptions);
    await expect(run).rejects.toBeInstanceOf(SpillwayConfigError);
    await expect(run).rejects.toThrow(message);
  });
});
