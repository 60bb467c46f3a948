/**
 * The `chain` scenario: users → A → B → C, once with C refusing everything and once with C
 * offered 1.5× its capacity, under five retry policies; for each, the attempts C receives per
 * user action. Naive retries multiply (3 layers × 3 attempts = 27); Spillway's budget and the
 * `never` signal passed up keep it near one.
 *
 * @module
 */
import { SpillwayConfigError } from '../../index.js';
import { simulate } from '../simulate.js';
import type { RetryPolicy, SimNode, SimulationResult } from '../types.js';

/** The policies compared, as the retry policy of each hop (user → A, A → B, B → C). */
export const chainPolicies: Readonly<
  Record<
    string,
    { readonly label: string; readonly hops: readonly [RetryPolicy, RetryPolicy, RetryPolicy] }
  >
> = {
  naive: {
    label: 'naive (3 attempts per layer)',
    hops: [{ kind: 'naive' }, { kind: 'naive' }, { kind: 'naive' }],
  },
  capped: {
    label: 'capped count at one layer (3 attempts at B → C only)',
    hops: [{ kind: 'none' }, { kind: 'none' }, { kind: 'naive' }],
  },
  budget: {
    label: 'per-dependency budget (breaker and throttle off)',
    hops: Array(3).fill({
      kind: 'spillway',
      options: { breaker: false, throttle: false },
    }) as never,
  },
  'budget+throttle': {
    label: 'budget + adaptive throttle (breaker off)',
    hops: Array(3).fill({ kind: 'spillway', options: { breaker: false } }) as never,
  },
  defaults: {
    label: 'Spillway defaults (budget, breaker, throttle)',
    hops: Array(3).fill({ kind: 'spillway' }) as never,
  },
};

/** One policy's figures. */
export interface ChainRow {
  readonly policy: string;
  readonly label: string;
  /** Attempts at C per user action. */
  readonly attemptsAtC: number;
  /** Attempts at B and at A per user action. */
  readonly attemptsAtB: number;
  readonly attemptsAtA: number;
  /** User actions answered with success within their deadline. */
  readonly succeededRatio: number;
  readonly actions: number;
}

/** The scenario's answer. */
export interface ChainResult {
  readonly scenario: 'chain';
  readonly seed: number;
  /** C refusing every request. */
  readonly refusing: readonly ChainRow[];
  /** C offered 1.5× what it can serve. */
  readonly overloaded: readonly ChainRow[];
}

/** Options of {@link chainScenario}. */
export interface ChainScenarioOptions {
  /** @default 1 */
  readonly seed?: number;
  /** Only these policies (names of {@link chainPolicies}). @default all */
  readonly policies?: readonly string[];
  /** Whether to run the 1.5× overload too (`overloaded` is empty without it). @default true */
  readonly overload?: boolean;
}

const hop = (name: string, to: string, retry: RetryPolicy): SimNode => ({
  name,
  slots: 10_000,
  serviceTime: { kind: 'constant', ms: 0.5 },
  maxQueue: 0,
  calls: [{ to, retry }],
});

/**
 * C refusing everything: 300 user actions over 3 s (as many as the real HTTP chain test makes),
 * a 5 s deadline; A, B and C answer in 0.5 ms.
 */
async function refusing(seed: number, policy: string): Promise<SimulationResult> {
  const [user, ab, bc] = chainPolicies[policy]!.hops;
  return simulate({
    seed,
    durationMs: 3_000,
    drainMs: 10_000,
    nodes: [
      hop('A', 'B', ab),
      hop('B', 'C', bc),
      {
        name: 'C',
        slots: 10_000,
        maxQueue: 0,
        serviceTime: { kind: 'constant', ms: 0.5 },
        answer: 'refuse',
      },
    ],
    clients: [
      {
        name: 'users',
        to: 'A',
        deadlineMs: 5_000,
        arrivals: { ratePerSec: 100, process: 'constant' },
        retry: user,
      },
    ],
  });
}

/**
 * C at 1.5× overload: C serves 1,000 requests a second (10 slots, 10 ms each, a line of 100),
 * users arrive at 1,500 a second (Poisson) for 20 s with a 1 s deadline.
 */
async function overloaded(seed: number, policy: string): Promise<SimulationResult> {
  const [user, ab, bc] = chainPolicies[policy]!.hops;
  return simulate({
    seed,
    durationMs: 20_000,
    drainMs: 10_000,
    nodes: [
      hop('A', 'B', ab),
      hop('B', 'C', bc),
      { name: 'C', slots: 10, maxQueue: 100, serviceTime: { kind: 'exponential', meanMs: 10 } },
    ],
    clients: [
      { name: 'users', to: 'A', deadlineMs: 1_000, arrivals: { ratePerSec: 1_500 }, retry: user },
    ],
  });
}

function rowOf(policy: string, r: SimulationResult): ChainRow {
  const u = r.clients['users']!;
  const per = (n: string): number => round(r.nodes[n]!.received / u.actions);
  return {
    policy,
    label: chainPolicies[policy]!.label,
    attemptsAtC: per('C'),
    attemptsAtB: per('B'),
    attemptsAtA: per('A'),
    succeededRatio: round(u.succeeded / u.actions),
    actions: u.actions,
  };
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** Runs the scenario. */
export async function chainScenario(options: ChainScenarioOptions = {}): Promise<ChainResult> {
  const seed = options.seed ?? 1;
  const names = options.policies ?? Object.keys(chainPolicies);
  const r: ChainRow[] = [];
  const o: ChainRow[] = [];
  for (const p of names) {
    if (chainPolicies[p] === undefined) {
      throw new SpillwayConfigError(
        'policies',
        `names among ${Object.keys(chainPolicies).join(', ')}`,
        p,
      );
    }
    r.push(rowOf(p, await refusing(seed, p)));
    if (options.overload !== false) o.push(rowOf(p, await overloaded(seed, p)));
  }
  return { scenario: 'chain', seed, refusing: r, overloaded: o };
}
