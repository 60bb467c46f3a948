/**
 * The `spike` scenario: the shapes of `spillway demo` in simulated time — a server of 10 slots
 * × 30 ms (about 333 requests a second) offered 1.5× and 10× its capacity by callers who wait
 * 1 s — once as a plain server with an unbounded line (naive) and once behind a real
 * `concurrencyLimit` of 10 with a short bounded line (as `spillway serve bounded`). G is goodput
 * (answers within the deadline, per second) over capacity, the figure the demo reports, so the
 * two can be compared (BENCHMARKS.md, "The demo").
 *
 * @module
 */
import { SpillwayConfigError } from '../../index.js';
import { simulate } from '../simulate.js';
import type { SimNode } from '../types.js';

/** The demo's server: 10 slots of 30 ms each; callers wait 1 s. */
export const spikeServer = { slots: 10, serviceMs: 30, deadlineMs: 1_000 } as const;
/** Requests a second the server can serve. */
export const spikeCapacityPerSec = (spikeServer.slots * 1_000) / spikeServer.serviceMs;
/** The offered loads, as multiples of capacity. */
export const spikeShapes = [1.5, 10] as const;
/** Simulated seconds of arrivals per run. */
const durationMs = 10_000;
/** The naive server's line: as good as unbounded at these loads (10× for 10 s is 33,334). */
const naiveLine = 100_000;

/** The servers compared. */
export const spikeServers: Readonly<
  Record<string, { readonly label: string; readonly node: SimNode }>
> = {
  naive: {
    label: 'naive (plain server, unbounded line)',
    node: {
      name: 'server',
      slots: spikeServer.slots,
      serviceTime: { kind: 'constant', ms: spikeServer.serviceMs },
      maxQueue: naiveLine,
    },
  },
  bounded: {
    label: 'bounded (concurrencyLimit 10, maxQueue 10, maxQueueWaitMs 50)',
    node: {
      name: 'server',
      slots: spikeServer.slots,
      serviceTime: { kind: 'constant', ms: spikeServer.serviceMs },
      maxQueue: naiveLine,
      guard: { limit: 10, maxQueue: 10, maxQueueWaitMs: 50 },
    },
  },
};

/** One server at one shape. */
export interface SpikeRow {
  readonly server: string;
  readonly label: string;
  /** Offered load, a multiple of capacity. */
  readonly shape: number;
  /** Goodput over capacity (over min(offered, capacity) below 1×). */
  readonly g: number;
  readonly actions: number;
  readonly succeeded: number;
  /** Requests served after their caller had given up. */
  readonly wasted: number;
}

/** The scenario's answer. */
export interface SpikeResult {
  readonly scenario: 'spike';
  readonly seed: number;
  readonly capacityPerSec: number;
  readonly rows: readonly SpikeRow[];
}

/** Options of {@link spikeScenario}. */
export interface SpikeScenarioOptions {
  /** @default 1 */
  readonly seed?: number;
  /** Only these servers (names of {@link spikeServers}). @default all */
  readonly servers?: readonly string[];
}

/** Runs every server at every shape. */
export async function spikeScenario(options: SpikeScenarioOptions = {}): Promise<SpikeResult> {
  const seed = options.seed ?? 1;
  const rows: SpikeRow[] = [];
  for (const name of options.servers ?? Object.keys(spikeServers)) {
    const s = spikeServers[name];
    if (s === undefined) {
      throw new SpillwayConfigError(
        'servers',
        `names among ${Object.keys(spikeServers).join(', ')}`,
        name,
      );
    }
    for (const shape of spikeShapes) {
      const r = await simulate({
        seed,
        durationMs,
        drainMs: spikeServer.deadlineMs,
        nodes: [s.node],
        clients: [
          {
            name: 'callers',
            to: 'server',
            deadlineMs: spikeServer.deadlineMs,
            arrivals: { ratePerSec: shape * spikeCapacityPerSec },
            retry: { kind: 'none', timeoutMs: spikeServer.deadlineMs },
          },
        ],
      });
      const u = r.clients['callers']!;
      const served = (Math.min(shape, 1) * spikeCapacityPerSec * durationMs) / 1_000;
      rows.push({
        server: name,
        label: s.label,
        shape,
        g: Math.round((u.succeeded / served) * 1_000) / 1_000,
        actions: u.actions,
        succeeded: u.succeeded,
        wasted: r.nodes['server']!.wasted,
      });
    }
  }
  return { scenario: 'spike', seed, capacityPerSec: spikeCapacityPerSec, rows };
}
