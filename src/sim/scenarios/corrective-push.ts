/**
 * The `corrective-push` scenario: the metastable scenario's service at load 0.9 with naive
 * retries loses 80 % of its capacity for 20 s; once the trigger is gone the retries keep it
 * down. At a push time, one corrective push is applied — none, shedding the sheddable half of
 * the users, replacing the naive retries by a retry budget (Spillway's `dependency()`), or a
 * restart that empties the line — and the goodput timelines are set side by side.
 *
 * @module
 */
import { SpillwayConfigError } from '../../index.js';
import { simulate } from '../simulate.js';
import type { ArrivalOptions } from '../arrivals.js';
import type { RetryPolicy, SimClient, SimNode } from '../types.js';
import { metastablePolicies, metastableService, metastableTrigger } from './metastable.js';

/** The run: load, trigger length, when the push comes, how long shedding lasts, the end. */
export const pushTimes = {
  load: 0.7,
  triggerEndMs: 30_000,
  pushAtMs: 45_000,
  shedForMs: 40_000,
  /** A restart's downtime: longer than a user's deadline, so the retries in flight run out. */
  restartDownMs: 5_000,
  durationMs: 135_000,
  /** Fraction of the users whose requests are sheddable. */
  sheddable: 0.8,
} as const;

const deadlineMs = 3_000;
const naive = metastablePolicies['naive']!.retry;
const budget = metastablePolicies['budget']!.retry;

const client = (name: string, retry: RetryPolicy, arrivals: ArrivalOptions): SimClient => ({
  name,
  to: 'service',
  deadlineMs,
  arrivals,
  retry,
});

const rate = pushTimes.load * metastableService.capacityPerSec;

/** The pushes compared: the clients and any restart each one runs with. */
export const pushPolicies: Readonly<
  Record<
    string,
    {
      readonly label: string;
      readonly clients: readonly SimClient[];
      readonly restarts?: SimNode['restarts'];
    }
  >
> = {
  none: {
    label: 'no push (naive retries throughout)',
    clients: [client('users', naive, { ratePerSec: rate })],
  },
  shed: {
    label: `shed the sheddable ${pushTimes.sheddable * 100} % for ${pushTimes.shedForMs / 1_000} s`,
    clients: [
      client('critical', naive, { ratePerSec: rate * (1 - pushTimes.sheddable) }),
      client('sheddable', naive, {
        ratePerSec: rate * pushTimes.sheddable,
        changes: [
          { atMs: pushTimes.pushAtMs, ratePerSec: 0 },
          {
            atMs: pushTimes.pushAtMs + pushTimes.shedForMs,
            ratePerSec: rate * pushTimes.sheddable,
          },
        ],
      }),
    ],
  },
  budget: {
    label: 'drop retries: naive retries replaced by a retry budget',
    clients: [
      client('before', naive, { ratePerSec: rate, stopMs: pushTimes.pushAtMs }),
      client('after', budget, { ratePerSec: rate, startMs: pushTimes.pushAtMs }),
    ],
  },
  restart: {
    label: `restart (the line emptied, ${pushTimes.restartDownMs / 1_000} s down)`,
    clients: [client('users', naive, { ratePerSec: rate })],
    restarts: [{ atMs: pushTimes.pushAtMs, downMs: pushTimes.restartDownMs }],
  },
};

/** One push's timeline. */
export interface PushTimeline {
  readonly policy: string;
  readonly label: string;
  /** Users answered within their deadline per second, by the second they arrived in, over capacity. */
  readonly goodput: readonly number[];
  /**
   * Seconds from the push to the end of the first 5 s window whose goodput reached 0.95 × what
   * was offered in it (the metastable scenario's bar; null: never).
   */
  readonly recoverySeconds: number | null;
}

/** The scenario's answer. */
export interface CorrectivePushResult {
  readonly scenario: 'corrective-push';
  readonly seed: number;
  readonly load: number;
  readonly triggerAtSeconds: number;
  readonly triggerEndSeconds: number;
  readonly pushAtSeconds: number;
  readonly timelines: readonly PushTimeline[];
}

/** Options of {@link correctivePushScenario}. */
export interface CorrectivePushScenarioOptions {
  /** @default 1 */
  readonly seed?: number;
  /** Only these pushes (names of {@link pushPolicies}). @default all */
  readonly policies?: readonly string[];
}

const windowSeconds = 5;

/** Runs every push. */
export async function correctivePushScenario(
  options: CorrectivePushScenarioOptions = {},
): Promise<CorrectivePushResult> {
  const seed = options.seed ?? 1;
  const s = metastableService;
  const timelines: PushTimeline[] = [];
  for (const policy of options.policies ?? Object.keys(pushPolicies)) {
    const p = pushPolicies[policy];
    if (p === undefined) {
      throw new SpillwayConfigError(
        'policies',
        `names among ${Object.keys(pushPolicies).join(', ')}`,
        policy,
      );
    }
    const node: SimNode = {
      name: 'service',
      slots: s.slots,
      serviceTime: { kind: 'exponential', meanMs: s.meanMs },
      maxQueue: s.maxQueue,
      capacityChanges: [
        { atMs: metastableTrigger.atMs, slots: metastableTrigger.slots },
        { atMs: pushTimes.triggerEndMs, slots: s.slots },
      ],
      ...(p.restarts === undefined ? {} : { restarts: p.restarts }),
    };
    const r = await simulate({
      seed,
      durationMs: pushTimes.durationMs,
      drainMs: deadlineMs,
      nodes: [node],
      clients: p.clients,
    });
    const seconds = pushTimes.durationMs / 1_000;
    const sum = (key: 'goodputPerBucket' | 'offeredPerBucket'): number[] =>
      Array.from({ length: seconds }, (_, b) =>
        Object.values(r.clients).reduce((a, c) => a + (c[key][b] ?? 0), 0),
      );
    const perSecond = sum('goodputPerBucket');
    const offered = sum('offeredPerBucket');
    const total = (xs: readonly number[], b: number): number =>
      xs.slice(b, b + windowSeconds).reduce((a, x) => a + x, 0);
    const push = pushTimes.pushAtMs / 1_000;
    let recoverySeconds: number | null = null;
    for (let b = push; b + windowSeconds <= seconds && recoverySeconds === null; b++) {
      const bar = 0.95 * Math.min(total(offered, b), s.capacityPerSec * windowSeconds);
      if (total(perSecond, b) >= bar) recoverySeconds = b + windowSeconds - push;
    }
    timelines.push({
      policy,
      label: p.label,
      goodput: perSecond.map((x) => Math.round((x / s.capacityPerSec) * 1_000) / 1_000),
      recoverySeconds,
    });
  }
  return {
    scenario: 'corrective-push',
    seed,
    load: pushTimes.load,
    triggerAtSeconds: metastableTrigger.atMs / 1_000,
    triggerEndSeconds: pushTimes.triggerEndMs / 1_000,
    pushAtSeconds: pushTimes.pushAtMs / 1_000,
    timelines,
  };
}
