/**
 * What a reference server runs (`ReferenceOptions`), and the bounded server's guard settings
 * (`boundedOptions`): the contract's reference setup, read by the node, Express and Fastify
 * servers alike.
 *
 * @module
 */
import { gradientLimit, type RateStore } from '../../index.js';
import { requestHeader, type AdmissionOptions } from '../../node/index.js';
import { decisionsPath } from './decision-trace.js';
import { metricsPath } from './metrics-endpoint.js';

/** What the servers run. */
export interface ReferenceOptions {
  /**
   * `naive` accepts everything; `bounded` is Spillway's reference guard; `bulkhead` is the
   * strongest peer users reach for, a bare node:http server with cockatiel's
   * `bulkhead(connections, 10)` (cockatiel must be installed).
   */
  readonly mode: 'naive' | 'bounded' | 'bulkhead';
  readonly framework: 'node' | 'express' | 'fastify';
  /** Database connections. @default 10 */
  readonly connections: number;
  /** Service time per query, ms. @default 30 */
  readonly serviceMs: number;
  /** `db`: wait on the simulated database; `cpu`: spin the CPU for serviceMs instead. */
  readonly work: 'db' | 'cpu';
  /** Per-client quota of the bounded server, tokens/s and burst. @default 150 and 15 */
  readonly clientRatePerSec: number;
  readonly clientBurst: number;
  /**
   * Share the per-client quota across replicas in this Redis (`redis://host:port`), with the
   * `local` failure policy; in memory when absent.
   */
  readonly redis?: { readonly url: string; readonly prefix: string; readonly replicas: number };
  /**
   * The bounded server's concurrency limit: a fixed number (the pool size is the right one
   * while the database answers in `serviceMs`), or `adaptive` (a `gradientLimit` that learns
   * it; the pool then keeps a wait list of its own, as real pools do). @default connections
   */
  readonly limit?: number | 'adaptive';
  /**
   * Serve the bounded guard's decisions as Prometheus metrics on `/metrics` (exempt from
   * admission), through `spillway/otel`; needs the OpenTelemetry packages installed.
   */
  readonly metrics?: boolean;
  /**
   * Serve the bounded guard's decisions in 250 ms windows as JSON on `/decisions` (exempt from
   * admission), from the diagnostics channels; needs nothing installed.
   */
  readonly decisions?: boolean;
  /**
   * A real PostgreSQL (`postgres://…`) instead of the simulated database: a pool of
   * `connections`, each query a `pg_sleep` of `serviceMs`, cancelled in the database when the
   * bounded server's signal aborts. Needs the pg package.
   */
  readonly postgresUrl?: string;
  /**
   * A slow path: a request to `/slow` runs one query of this many ms instead of `serviceMs` (a
   * report, an export), so a client within its rate quota can hold slots long. The server
   * reports on /stats the most slow queries each client had running at once. @default none
   */
  readonly slowMs?: number;
  /**
   * The bounded server's `tenantShare.maxShare`: the largest fraction of the route's slots one
   * client key may hold. @default none (no shares)
   */
  readonly tenantShare?: number;
}

/** The reference `bounded` setup of the contract (DESIGN §1, issue: HTTP). */
export function boundedOptions(o: ReferenceOptions, store?: RateStore): AdmissionOptions {
  return {
    limit:
      o.limit === 'adaptive'
        ? gradientLimit({
            initialLimit: o.connections,
            minLimit: 2,
            maxLimit: o.connections * 5,
            minWindowMs: 100,
            maxWindowMs: 250,
          })
        : (o.limit ?? o.connections),
    maxQueue: 10,
    maxQueueWaitMs: 50,
    // Per-client buckets keyed on x-client-id — trusted here because the demo's clients set it;
    // without a key function the guard ignores it and keys on the socket address.
    quota: {
      ratePerSec: o.clientRatePerSec,
      burst: o.clientBurst,
      name: 'per-client',
      ...(store === undefined ? {} : { store }),
    },
    key: (req) => requestHeader(req, 'x-client-id'),
    deadlineMs: 1_000,
    ...(o.tenantShare === undefined ? {} : { tenantShare: { maxShare: o.tenantShare } }),
    // CPU-bound work saturates the event loop, which no slot count sees: the loop's own signal.
    ...(o.work === 'cpu' ? { eventLoop: true } : {}),
    exempt: [
      '/healthz',
      '/stats',
      '/admin/service-ms',
      ...(o.metrics === true ? [metricsPath] : []),
      ...(o.decisions === true ? [decisionsPath] : []),
    ],
    penaltyBox: false,
  };
}
