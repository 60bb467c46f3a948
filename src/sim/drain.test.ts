// The simulator's own events fire without draining promise callbacks between them unless one
// touched promise code (`SimClock.touch`). A missed `touch()` would let a promise callback run
// late, at a later event's time: every scenario and a run using every part is made both ways
// here, and the results must be identical.
import { afterEach, describe, expect, it } from 'vitest';
import {
  chainScenario,
  correctivePushScenario,
  metastableCell,
  metastablePolicies,
  simulate,
  spikeScenario,
  type SimulationOptions,
} from './index.js';
import { drainAfterEveryEvent } from './sim-clock.js';

/** `make()` with the simulator's own events chained, and with a drain after every event. */
async function bothWays(make: () => Promise<unknown>): Promise<[string, string]> {
  drainAfterEveryEvent(false);
  const chained = JSON.stringify(await make());
  drainAfterEveryEvent(true);
  const drained = JSON.stringify(await make());
  return [chained, drained];
}

afterEach(() => drainAfterEveryEvent(false));

/** Every part at once: guards (fixed and adaptive), fan-out, restarts, capacity changes. */
const everything: SimulationOptions = {
  seed: 3,
  durationMs: 6_000,
  drainMs: 2_000,
  nodes: [
    {
      name: 'api',
      slots: 6,
      maxQueue: 30,
      serviceTime: { kind: 'exponential', meanMs: 8 },
      guard: { limit: 'gradient', maxQueue: 20, maxQueueWaitMs: 50 },
      calls: [
        { to: 'db', retry: { kind: 'spillway', options: { timeoutMs: 40 } } },
        { to: 'cache', retry: { kind: 'naive', timeoutMs: 20, delayMs: 2 } },
      ],
      restarts: [{ atMs: 3_000, downMs: 300 }],
    },
    {
      name: 'db',
      slots: 6,
      maxQueue: 10,
      serviceTime: { kind: 'exponential', meanMs: 15 },
      guard: { limit: 8, maxQueue: 5 },
      capacityChanges: [
        { atMs: 1_500, slots: 2 },
        { atMs: 2_500, slots: 6 },
      ],
    },
    { name: 'cache', slots: 2, maxQueue: 4, serviceTime: { kind: 'constant', ms: 3 } },
  ],
  clients: [
    {
      name: 'users',
      to: 'api',
      deadlineMs: 200,
      arrivals: { ratePerSec: 100, burst: 2, changes: [{ atMs: 2_000, ratePerSec: 250 }] },
      retry: { kind: 'spillway', options: { breaker: false } },
    },
    {
      name: 'batch',
      to: 'db',
      deadlineMs: 100,
      arrivals: { ratePerSec: 100, process: 'constant' },
      retry: { kind: 'naive', timeoutMs: 30 },
    },
  ],
};

describe("the simulator's own events, fired without a drain between them", () => {
  it('give the same results as a drain after every event: a run using every part', async () => {
    const [chained, drained] = await bothWays(() => simulate(everything));
    expect(chained).toBe(drained);
    // Not a run where nothing happens: both guards refused, the restart and the fan-out ran.
    const r = JSON.parse(chained) as Awaited<ReturnType<typeof simulate>>;
    expect(r.nodes['api']!.refused).toBeGreaterThan(0);
    expect(r.nodes['db']!.refused).toBeGreaterThan(0);
    expect(r.nodes['cache']!.received).toBeGreaterThan(0);
    expect(r.clients['users']!.succeeded).toBeGreaterThan(0);
  });

  it('give the same results in the chain, spike and corrective-push scenarios', async () => {
    for (const make of [
      () => chainScenario({ seed: 2 }),
      () => spikeScenario({ seed: 2 }),
      () => correctivePushScenario({ seed: 2 }),
    ]) {
      const [chained, drained] = await bothWays(make);
      expect(chained).toBe(drained);
    }
    // Eight seconds here, made twice: room for a busy machine.
  }, 60_000);

  it('give the same results in metastable cells of every policy', async () => {
    for (const policy of Object.keys(metastablePolicies)) {
      for (const [load, triggerSeconds] of [
        [0.7, 10],
        [0.95, 40],
      ] as const) {
        const [chained, drained] = await bothWays(() =>
          metastableCell({ policy, load, triggerSeconds, seed: 2 }),
        );
        expect(chained).toBe(drained);
      }
    }
  });
});
