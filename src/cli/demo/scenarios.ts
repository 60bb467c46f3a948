/**
 * The demo's scenarios (issue: the main job), as load groups. Capacity is known exactly: the
 * simulated database has 10 connections × 30 ms = 333 req/s.
 *
 * @module
 */
import type { LoadGroup } from '../../load/index.js';

/** One scenario: what to offer and whether to time a request sent after the rush. */
export interface Scenario {
  readonly id: 'reference' | 'greedy' | '10x' | 'slowdown' | 'postgres' | 'slots';
  readonly title: string;
  readonly groups: readonly LoadGroup[];
  readonly durationMs: number;
  /** Send one more request 100 ms after the rush and time it (the recovery check). */
  readonly nextRequest: boolean;
  /** The database slows to `serviceMs` at `atMs` and is fast again at `untilMs`. */
  readonly slowdown?: {
    readonly atMs: number;
    readonly untilMs: number;
    readonly serviceMs: number;
  };
  /** Servers of its own, instead of the demo's naive / bulkhead / bounded. */
  readonly servers?: readonly string[];
  /** More `spillway serve` arguments for each of its servers (`--slow-ms`, say). */
  readonly serveArgs?: readonly string[];
  /** Servers left out of this scenario. */
  readonly without?: readonly string[];
  /**
   * How long each server gets the scenario's own load before it is measured, in ms.
   * @default 2,000; 500 for the naive server (see `warmupMsOf`)
   */
  readonly warmupMs?: number;
  /**
   * `postgres`: the servers run their queries on the real PostgreSQL given with `--pg` (a pool
   * of 10, each query `pg_sleep(0.03)`) instead of the simulated database.
   */
  readonly database?: 'postgres';
}

/** Scenarios run unless `--scenarios` says otherwise. */
export const defaultScenarios = ['reference', 'greedy', '10x'] as const;

/**
 * The slots scenario: a tenant within its rate quota whose every request is a slow query, and
 * the share of the route's slots the bounded server gives one client when shares are on.
 */
export const slotsSetup = {
  /** The client id (`x-client-id`) of the tenant holding slots. */
  holder: 'holder',
  /** Its rate: well within the bounded server's quota of 150/s. */
  holderRatePerSec: 40,
  /** How long each of its queries holds a connection, and with it a slot. */
  slowMs: 600,
  /** `tenantShare.maxShare` of the `shares` server: 3 of its 10 slots. */
  maxShare: 0.3,
} as const;

/** Callers give up after this long, in every scenario. */
export const callerDeadlineMs = 1_000;

/** The demo's scenarios; `quick` shortens the greedy, 10× and slowdown ones for CI. */
export function scenarios(options: { readonly quick: boolean }): Scenario[] {
  // At 1.5× capacity an unbounded line needs seconds to outgrow its callers' 1 s patience, and
  // that collapse is the point, so the reference run keeps 5 s even when quick. Quick runs the
  // others for 2 s (a quota and a 10× rush show in that) and without the naive server, whose
  // collapse the reference run has shown: the whole stays under 40 s.
  const durationMs = 5_000;
  const tenXMs = options.quick ? 2_000 : 5_000;
  const greedyMs = options.quick ? 2_000 : 5_000;
  const without = options.quick ? { without: ['naive'] } : {};
  const slowMs = options.quick ? 3_000 : 5_000;
  const slotsMs = options.quick ? 2_000 : 5_000;
  const clients = (name: string, ratePerSec: number, ms = durationMs): LoadGroup => ({
    name,
    ratePerSec,
    clients: 100,
    headers: { 'x-client-id': `${name}-{client}` },
    deadlineMs: callerDeadlineMs,
    durationMs: ms,
  });
  return [
    {
      id: 'reference',
      title: '500 req/s (1.5× capacity) from 100 clients; callers give up after 1 s',
      groups: [clients('clients', 500)],
      durationMs,
      nextRequest: true,
    },
    {
      id: 'greedy',
      title: 'one greedy client at 400 req/s next to 100 clients at 1 req/s each',
      groups: [
        {
          name: 'greedy',
          ratePerSec: 400,
          headers: { 'x-client-id': 'greedy' },
          deadlineMs: callerDeadlineMs,
          durationMs: greedyMs,
        },
        clients('polite', 100, greedyMs),
      ],
      durationMs: greedyMs,
      nextRequest: false,
      ...without,
    },
    {
      id: '10x',
      title: '3,300 req/s (10× capacity) from 100 clients; callers give up after 1 s',
      groups: [clients('clients', 3_300, tenXMs)],
      durationMs: tenXMs,
      nextRequest: true,
      ...without,
    },
    {
      id: 'slowdown',
      title:
        '200 req/s; the database slows from 30 ms to 300 ms for a third of the run, then recovers',
      groups: [clients('clients', 200, slowMs * 3)],
      durationMs: slowMs * 3,
      nextRequest: false,
      slowdown: { atMs: slowMs, untilMs: slowMs * 2, serviceMs: 300 },
      // The pool size as a fixed cap, a cap sized generously, and a limit that learns it.
      servers: ['fixed-10', 'fixed-50', 'adaptive'],
    },
    {
      id: 'postgres',
      title:
        '500 req/s (1.5× capacity) from 100 clients against PostgreSQL: 10 connections × pg_sleep(0.03); callers give up after 1 s',
      groups: [clients('clients', 500)],
      // The reference run's length: an unbounded line needs seconds to outgrow its callers.
      durationMs,
      nextRequest: true,
      database: 'postgres',
    },
    {
      id: 'slots',
      title: `one tenant at ${slotsSetup.holderRatePerSec} req/s (within its quota), each request a ${slotsSetup.slowMs} ms query, next to 100 clients at 1 req/s each`,
      groups: [
        {
          name: slotsSetup.holder,
          ratePerSec: slotsSetup.holderRatePerSec,
          path: '/slow',
          headers: { 'x-client-id': slotsSetup.holder },
          deadlineMs: callerDeadlineMs,
          durationMs: slotsMs,
        },
        clients('polite', 100, slotsMs),
      ],
      durationMs: slotsMs,
      nextRequest: false,
      // It would hold 24 slots if it could: the bare bulkhead and Spillway without shares let it
      // take all 10; with shares on, it holds its 3.
      servers: ['bulkhead', 'bounded', 'shares'],
      serveArgs: ['--slow-ms', String(slotsSetup.slowMs)],
    },
  ];
}
