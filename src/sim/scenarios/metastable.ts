/**
 * The `metastable` scenario: a service at load L (a fraction of its capacity) loses 80 % of its
 * capacity for T seconds, then gets it back. Does goodput return? For each retry policy, a grid
 * over L and T; a cell is `recovered` when, within 60 s of the trigger's end, some 5 s window's
 * goodput reaches 0.95 × min(offered, capacity). Naive retries keep a recovered server busy
 * with abandoned work (the sustaining effect); Spillway's budget, throttle and breaker drop it.
 *
 * @module
 */
import { SpillwayConfigError } from '../../index.js';
import { simulate } from '../simulate.js';
import type { RetryPolicy } from '../types.js';

/** The service: 10 slots of 200 ms (exponential) = 50 requests a second; a line of 1,000. */
export const metastableService = {
  slots: 10,
  meanMs: 200,
  capacityPerSec: 50,
  maxQueue: 1_000,
} as const;
/** The trigger: capacity down to 2 slots (D = 0.2) from 10 s on, for T seconds. */
export const metastableTrigger = { atMs: 10_000, slots: 2 } as const;
/** Each attempt is abandoned after 1 s; a user waits 3 s. */
const timeoutMs = 1_000;
const deadlineMs = 3_000;
const windowBuckets = 5;
const recoveryMs = 60_000;

/** The retry policies compared. */
export const metastablePolicies: Readonly<
  Record<string, { readonly label: string; readonly retry: RetryPolicy }>
> = {
  naive: {
    label: 'naive (3 attempts, 1 s timeout each)',
    retry: { kind: 'naive', maxAttempts: 3, timeoutMs },
  },
  budget: {
    label: 'retry budget (breaker and throttle off)',
    retry: { kind: 'spillway', options: { timeoutMs, breaker: false, throttle: false } },
  },
  'budget+throttle': {
    label: 'budget + adaptive throttle (breaker off)',
    retry: { kind: 'spillway', options: { timeoutMs, breaker: false } },
  },
  defaults: {
    label: 'Spillway defaults (budget, throttle, breaker)',
    retry: { kind: 'spillway', options: { timeoutMs } },
  },
};

/** Loads (fractions of capacity) and trigger durations (s) of the grid. */
export const defaultLoads = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95] as const;
export const defaultTriggerSeconds = [1, 2, 4, 6, 10, 15, 20, 30] as const;

/** One cell. */
export interface MetastableCell {
  readonly load: number;
  readonly triggerSeconds: number;
  readonly recovered: boolean;
  /** Seconds from the trigger's end to the first window that met the bar (null: never). */
  readonly recoverySeconds: number | null;
  /** Goodput over the last 5 s window observed, as a fraction of capacity. */
  readonly finalGoodput: number;
}

/** The grid of one policy. */
export interface MetastablePanel {
  readonly policy: string;
  readonly label: string;
  readonly cells: readonly MetastableCell[];
}

/** The scenario's answer. */
export interface MetastableResult {
  readonly scenario: 'metastable';
  readonly seed: number;
  readonly loads: readonly number[];
  readonly triggerSeconds: readonly number[];
  readonly panels: readonly MetastablePanel[];
}

/** Options of {@link metastableScenario}. */
export interface MetastableScenarioOptions {
  /** @default 1 */
  readonly seed?: number;
  /** @default all of {@link metastablePolicies} */
  readonly policies?: readonly string[];
  /** @default {@link defaultLoads} */
  readonly loads?: readonly number[];
  /** @default {@link defaultTriggerSeconds} */
  readonly triggerSeconds?: readonly number[];
}

/** Runs one cell. */
export async function metastableCell(p: {
  readonly seed: number;
  readonly policy: string;
  readonly load: number;
  readonly triggerSeconds: number;
}): Promise<MetastableCell> {
  const { load, triggerSeconds } = p;
  const s = metastableService;
  const endMs = metastableTrigger.atMs + triggerSeconds * 1_000;
  const r = await simulate({
    seed: p.seed,
    durationMs: endMs + recoveryMs,
    drainMs: deadlineMs,
    nodes: [
      {
        name: 'service',
        slots: s.slots,
        serviceTime: { kind: 'exponential', meanMs: s.meanMs },
        maxQueue: s.maxQueue,
        capacityChanges: [
          { atMs: metastableTrigger.atMs, slots: metastableTrigger.slots },
          { atMs: endMs, slots: s.slots },
        ],
      },
    ],
    clients: [
      {
        name: 'users',
        to: 'service',
        deadlineMs,
        arrivals: { ratePerSec: load * s.capacityPerSec },
        retry: metastablePolicies[p.policy]!.retry,
      },
    ],
  });
  const u = r.clients['users']!;
  const first = Math.ceil(endMs / r.bucketMs);
  const last = Math.floor((endMs + recoveryMs) / r.bucketMs) - windowBuckets;
  let recoverySeconds: number | null = null;
  let final = 0;
  for (let b = first; b <= last; b++) {
    let offered = 0;
    let good = 0;
    for (let i = b; i < b + windowBuckets; i++) {
      offered += u.offeredPerBucket[i] ?? 0;
      good += u.goodputPerBucket[i] ?? 0;
    }
    const bar = 0.95 * Math.min(offered, (s.capacityPerSec * windowBuckets * r.bucketMs) / 1_000);
    final = good / ((s.capacityPerSec * windowBuckets * r.bucketMs) / 1_000);
    if (recoverySeconds === null && good >= bar)
      recoverySeconds = ((b + windowBuckets) * r.bucketMs - endMs) / 1_000;
  }
  return {
    load,
    triggerSeconds,
    recovered: recoverySeconds !== null,
    recoverySeconds,
    finalGoodput: Math.round(final * 1_000) / 1_000,
  };
}

/** Runs the grid for every policy. */
export async function metastableScenario(
  options: MetastableScenarioOptions = {},
): Promise<MetastableResult> {
  const seed = options.seed ?? 1;
  const loads = options.loads ?? defaultLoads;
  const triggers = options.triggerSeconds ?? defaultTriggerSeconds;
  const names = options.policies ?? Object.keys(metastablePolicies);
  const panels: MetastablePanel[] = [];
  for (const policy of names) {
    const m = metastablePolicies[policy];
    if (m === undefined) {
      throw new SpillwayConfigError(
        'policies',
        `names among ${Object.keys(metastablePolicies).join(', ')}`,
        policy,
      );
    }
    const cells: MetastableCell[] = [];
    for (const triggerSeconds of triggers) {
      for (const load of loads)
        cells.push(await metastableCell({ seed, policy, load, triggerSeconds }));
    }
    panels.push({ policy, label: m.label, cells });
  }
  return { scenario: 'metastable', seed, loads: [...loads], triggerSeconds: [...triggers], panels };
}
