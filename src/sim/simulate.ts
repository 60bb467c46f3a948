/**
 * `simulate()`: builds the topology (servers, the calls between them, the users), runs it on
 * the simulator's clock from one seed, and returns what every node and client saw. Same
 * options, same result, byte for byte: every random number comes from the seed (one generator
 * per part, so adding a part does not shift the others'), and events tie-break in the order
 * they were set.
 *
 * @module
 */
import { SpillwayConfigError } from '../index.js';
import {
  nonEmptyString,
  nonNegativeInteger,
  nonNegativeNumber,
  positiveInteger,
  positiveNumber,
} from '../core/internal/validate.js';
import { arrivalsOf, startArrivals } from './arrivals.js';
import { link, type Link } from './link.js';
import { forkRandom } from './random.js';
import { guardLimit, SimServer, type Behaviour } from './server.js';
import { serviceSampler } from './service-time.js';
import { SimClock } from './sim-clock.js';
import type { ClientResult, NodeResult, SimulationOptions, SimulationResult } from './types.js';
import { concurrencyLimit } from '../index.js';

/** Most nodes, clients, timeline buckets or requests in one server's line a run may have. */
export const simLimits = {
  nodes: 1_000,
  clients: 1_000,
  buckets: 100_000,
  changes: 1_000,
  /** A server's `maxQueue`: its waiting requests hold no event, so the line has its own bound. */
  line: 1_000_000,
} as const;

interface ClientCounters {
  actions: number;
  succeeded: number;
  failed: number;
  readonly offered: number[];
  readonly goodput: number[];
}

/**
 * Runs one simulation.
 *
 * @example
 * const result = await simulate({
 *   seed: 7,
 *   durationMs: 60_000,
 *   nodes: [{ name: 'api', slots: 8, serviceTime: { kind: 'exponential', meanMs: 40 } }],
 *   clients: [{ name: 'users', to: 'api', deadlineMs: 1_000,
 *     arrivals: { ratePerSec: 150 }, retry: { kind: 'spillway' } }],
 * });
 */
export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  if (typeof options !== 'object' || options === null) {
    throw new SpillwayConfigError('simulate options', 'an options object', options);
  }
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed)) throw new SpillwayConfigError('seed', 'an integer', seed);
  const durationMs = positiveNumber('durationMs', options.durationMs);
  const drainMs = nonNegativeNumber('drainMs', options.drainMs ?? 30_000);
  const bucketMs = positiveNumber('bucketMs', options.bucketMs ?? 1_000);
  const maxEvents = positiveInteger('maxEvents', options.maxEvents ?? 1_000_000);
  const maxBuckets = Math.min(Math.ceil((durationMs + drainMs) / bucketMs) + 1, simLimits.buckets);
  const clock = new SimClock(maxEvents);
  let part = 0;
  const nextRandom = () => forkRandom(seed, part++);

  const nodes = listOf('nodes', options.nodes, simLimits.nodes);
  const servers = new Map<string, SimServer>();
  for (const [i, n] of nodes.entries()) {
    const o = `nodes[${i}]`;
    const name = nonEmptyString(`${o}.name`, n?.name);
    if (servers.has(name))
      throw new SpillwayConfigError(`${o}.name`, 'a name no other node has', name);
    const random = nextRandom();
    const slots = { current: positiveInteger(`${o}.slots`, n.slots) };
    const g = n.guard;
    const guard =
      g === undefined
        ? undefined
        : concurrencyLimit({
            limit: guardLimit(g.limit, random),
            maxQueue: g.maxQueue ?? 0,
            maxQueueWaitMs: g.maxQueueWaitMs ?? 1_000,
            clock,
          });
    const server = new SimServer({
      name,
      clock,
      slots,
      maxQueue: lineOf(`${o}.maxQueue`, n.maxQueue),
      sample: serviceSampler(`${o}.serviceTime`, n.serviceTime, random).sample,
      guard,
      bucketMs,
      maxBuckets,
    });
    for (const [j, r] of listOf(`${o}.restarts`, n.restarts ?? [], simLimits.changes).entries()) {
      const atMs = nonNegativeNumber(`${o}.restarts[${j}].atMs`, r?.atMs);
      const downMs = nonNegativeNumber(`${o}.restarts[${j}].downMs`, r.downMs);
      clock.setTimer(atMs, () => server.restart(downMs));
    }
    for (const [j, c] of listOf(
      `${o}.capacityChanges`,
      n.capacityChanges ?? [],
      simLimits.changes,
    ).entries()) {
      const atMs = nonNegativeNumber(`${o}.capacityChanges[${j}].atMs`, c?.atMs);
      const to = positiveInteger(`${o}.capacityChanges[${j}].slots`, c.slots);
      clock.setTimer(atMs, () => (slots.current = to));
    }
    servers.set(name, server);
  }
  const serverOf = (option: string, name: unknown): SimServer => {
    const s = typeof name === 'string' ? servers.get(name) : undefined;
    if (s === undefined) throw new SpillwayConfigError(option, 'the name of a node', name);
    return s;
  };
  for (const [i, n] of nodes.entries()) {
    const o = `nodes[${i}]`;
    const server = servers.get(n.name)!;
    const answer = n.answer ?? 'ok';
    if (answer !== 'ok' && answer !== 'refuse') {
      throw new SpillwayConfigError(`${o}.answer`, "'ok' or 'refuse'", answer);
    }
    const calls = listOf(`${o}.calls`, n.calls ?? [], simLimits.nodes);
    const links: Link[] = calls.map((c, j) =>
      link(`${o}.calls[${j}].retry`, c?.retry, {
        clock,
        random: nextRandom(),
        server: serverOf(`${o}.calls[${j}].to`, c?.to),
        name: c.to,
      }),
    );
    server.behaviour = behaviourOf(answer, links, server);
  }

  const clients = listOf('clients', options.clients, simLimits.clients);
  const counters = new Map<string, ClientCounters>();
  for (const [i, c] of clients.entries()) {
    const o = `clients[${i}]`;
    const name = nonEmptyString(`${o}.name`, c?.name);
    if (counters.has(name))
      throw new SpillwayConfigError(`${o}.name`, 'a name no other client has', name);
    const deadlineMs = positiveNumber(`${o}.deadlineMs`, c.deadlineMs);
    const to = link(`${o}.retry`, c.retry, {
      clock,
      random: nextRandom(),
      server: serverOf(`${o}.to`, c.to),
      name: c.to,
    });
    const arrivals = arrivalsOf(`${o}.arrivals`, c.arrivals, durationMs);
    const k: ClientCounters = { actions: 0, succeeded: 0, failed: 0, offered: [], goodput: [] };
    counters.set(name, k);
    const fail = (): void => void k.failed++;
    startArrivals(arrivals, {
      clock,
      random: nextRandom(),
      arrive: () => {
        const start = clock.now();
        const expiresAt = start + deadlineMs;
        const b = Math.min(Math.floor(start / bucketMs), maxBuckets - 1);
        k.actions++;
        k.offered[b] = (k.offered[b] ?? 0) + 1;
        to(expiresAt, (failure) => {
          // An answer after the user stopped waiting is no answer.
          if (failure !== undefined || clock.now() > expiresAt) return fail();
          k.succeeded++;
          k.goodput[b] = (k.goodput[b] ?? 0) + 1;
        });
      },
    });
  }

  await clock.run(durationMs + drainMs);
  return {
    seed,
    durationMs,
    bucketMs,
    endedAtMs: clock.now(),
    events: clock.fired,
    nodes: Object.fromEntries(
      [...servers].map(([name, s]): [string, NodeResult] => {
        const c = s.counters;
        return [
          name,
          {
            received: c.received,
            refused: c.refused,
            served: c.served,
            wasted: c.wasted,
            receivedPerBucket: dense(c.receivedPerBucket, maxBuckets),
          },
        ];
      }),
    ),
    clients: Object.fromEntries(
      [...counters].map(([name, k]): [string, ClientResult] => [
        name,
        {
          actions: k.actions,
          succeeded: k.succeeded,
          failed: k.failed,
          offeredPerBucket: dense(k.offered, maxBuckets),
          goodputPerBucket: dense(k.goodput, maxBuckets),
        },
      ]),
    ),
  };
}

/** What a served request does next: call every callee (in parallel), then answer. */
function behaviourOf(
  answer: 'ok' | 'refuse',
  links: readonly Link[],
  server: SimServer,
): Behaviour {
  const refused = answer === 'refuse';
  if (links.length === 0) {
    return refused
      ? (_request, done) => done(server.refusalForAnswer())
      : (_request, done) => done(undefined);
  }
  return (request, done) => {
    // The callees' answers in: the first failure is passed up at once (the others still run).
    const called = (failure: Error | undefined): void => {
      if (failure !== undefined) done(failure);
      else done(refused ? server.refusalForAnswer() : undefined);
    };
    if (links.length === 1) return links[0]!(request.expiresAt, called);
    let left = links.length;
    let failed = false;
    const each = (failure: Error | undefined): void => {
      if (failed) return;
      if (failure !== undefined) failed = true;
      if (failure !== undefined || --left === 0) called(failure);
    };
    for (const l of links) l(request.expiresAt, each);
  };
}

function listOf<T>(option: string, value: readonly T[] | undefined, max: number): readonly T[] {
  if (!Array.isArray(value) || value.length > max) {
    throw new SpillwayConfigError(option, `an array of at most ${max}`, value);
  }
  return value as readonly T[];
}

/** `sparse` as a plain array of `length` numbers (holes → 0), trailing zeros kept. */
function dense(sparse: readonly number[], length: number): number[] {
  const out = new Array<number>(length).fill(0);
  for (let i = 0; i < length; i++) out[i] = sparse[i] ?? 0;
  return out;
}

/** A server's `maxQueue`, checked: a whole number up to {@link simLimits}' `line`. */
function lineOf(option: string, value: number | undefined): number {
  const n = nonNegativeInteger(option, value ?? 1_000);
  if (n > simLimits.line) {
    throw new SpillwayConfigError(option, `at most ${simLimits.line} waiting requests`, n);
  }
  return n;
}
