/**
 * The options of a load run, their defaults and their validation (a group's own in
 * `group-options.ts`). Bad options fail before any load is sent, with an error naming the
 * option and the value.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';
import {
  nonNegativeInteger,
  nonNegativeNumber,
  nonEmptyString,
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../core/internal/validate.js';
import { arrivals, type Arrival } from './arrivals.js';
import {
  resolveGroup,
  type GroupDefaults,
  type LoadGroup,
  type ResolvedGroup,
} from './group-options.js';
import { checkHeaders, checkMethod } from './http-request.js';
import type { RetryPolicy } from './retry-policy.js';
import type { LoadProgress, WindowStats } from './result.js';
import { maxTimerDelayMs, timerMs } from './timer.js';

export type { LoadGroup, ResolvedGroup } from './group-options.js';

/** Validity thresholds: a run past any of them is flagged as not valid. */
export interface ValidityThresholds {
  /** Schedule lag p99 (intended → actual send). @default 5 */
  readonly maxLagP99Ms?: number;
  /** Generator CPU, percent of one core, while sending. @default 90 */
  readonly maxCpuPercent?: number;
  /** Share of requests the generator dropped. @default 0 */
  readonly maxDroppedFraction?: number;
}

/** Options of {@link runLoad}. */
export interface LoadOptions {
  /** Target, `http://host:port/path` (plain HTTP/1.1). */
  readonly url: string | URL;
  /** How long arrivals are scheduled, in ms (in-flight requests then drain). */
  readonly durationMs: number;
  /**
   * Before the measured schedule, send for this long at the same rates over the same
   * connections, and record nothing of it: so neither side's start-up (JIT compilation,
   * per-connection set-up, heaps growing to size) is charged to the first second. Groups that
   * start later or send a fixed number of requests do not take part. @default 0
   */
  readonly warmupMs?: number;
  /** Shorthand for one group at this rate. Give this or `groups`. */
  readonly ratePerSec?: number;
  /** Several streams in one run, each with its own rate, headers and deadline. */
  readonly groups?: readonly LoadGroup[];
  /** @default 'constant' */
  readonly arrival?: Arrival;
  /** @default 'GET' */
  readonly method?: string;
  /** Headers for every group. @default {} */
  readonly headers?: Readonly<Record<string, string>>;
  /** @default none */
  readonly body?: string | Uint8Array;
  /** Per-attempt client deadline in ms; the socket is destroyed when it passes. 0 for none. @default 10000 */
  readonly deadlineMs?: number;
  /** Goodput counts `ok` within this latency. @default the deadline (no limit without one) */
  readonly sloMs?: number;
  /** @default { kind: 'none' } */
  readonly retry?: RetryPolicy;
  /**
   * `keep-alive`: a pool of connections, one request at a time each. `new`: a new connection
   * per request (`Connection: close`). @default 'keep-alive'
   */
  readonly connection?: 'keep-alive' | 'new';
  /**
   * Most open connections. Arrivals that find every connection busy are `dropped`.
   * @default Σ rate × deadline (every request held for its whole deadline) × 1.25 + 32, ≤ 10000
   */
  readonly maxConnections?: number;
  /**
   * Connections opened before the schedule starts (keep-alive only), and kept alive as a
   * reserve for the whole run: a server that stalls for up to 100 ms leaves that many arrivals
   * without an answer, and each of them needs a connection of its own.
   * @default Σ rate × 100 ms + 4, ≤ maxConnections
   */
  readonly warmConnections?: number;
  /**
   * New connections opened per second at most while the schedule runs (keep-alive only; the
   * warm connections are not counted), in bursts of up to 128. An arrival that
   * finds every connection busy when this budget is spent is `dropped` (`connect rate`), never
   * queued: after a stall longer than the reserve covers, a flood of connects would cost the
   * server more than the requests do (each one accepted and set up, maybe past its listen
   * backlog) and stall it again.
   * `Infinity` for no limit.
   * @default 2 × Σ rate, at most 5000 (a Node server accepts ~20,000 connections/s per core)
   */
  readonly maxNewConnectionsPerSec?: number;
  /** Most requests in flight, counting those waiting to retry. @default 2 × maxConnections */
  readonly maxInFlight?: number;
  /**
   * Idle connections beyond the warm reserve close after idling this long (below the server's
   * keep-alive timeout), a few at a time; the reserve's oldest connection is used next once it
   * has idled half as long, so neither end closes the reserve as idle. @default 4000
   */
  readonly idleTimeoutMs?: number;
  /** After the schedule ends, wait at most this long for answers. @default the longest deadline × (retries + 1) + 1000, or 10000 */
  readonly drainMs?: number;
  /** Seed for Poisson arrivals and backoff jitter. @default 1 */
  readonly seed?: number;
  /** Name of the run in tables and reports. @default scenario and series, or the URL */
  readonly label?: string;
  /** Scenario name; the report puts runs of one scenario side by side. */
  readonly scenario?: string;
  /** Series name (e.g. the server); the report draws goodput vs offered load per series. */
  readonly series?: string;
  /** 1-second windows kept; later ones are counted, not stored. @default 3600 */
  readonly maxWindows?: number;
  readonly validity?: ValidityThresholds;
  /** Aborting stops scheduling; in-flight requests still drain. */
  readonly signal?: AbortSignal;
  /** Called as each 1-second window closes (progress lines, live charts). */
  readonly onWindow?: (event: {
    readonly window: WindowStats;
    readonly totals: LoadProgress;
  }) => void;
}

/** Every option resolved. */
export interface ResolvedOptions {
  readonly url: URL;
  readonly host: string;
  readonly port: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly groups: readonly ResolvedGroup[];
  readonly connection: 'keep-alive' | 'new';
  readonly maxConnections: number;
  readonly warmConnections: number;
  /** `Infinity` in `new` connection mode. */
  readonly maxNewConnectionsPerSec: number;
  readonly connectBurst: number;
  readonly maxInFlight: number;
  readonly idleTimeoutMs: number;
  readonly drainMs: number;
  readonly seed: number;
  readonly label: string;
  readonly scenario: string | undefined;
  readonly series: string | undefined;
  readonly maxWindows: number;
  readonly validity: Required<ValidityThresholds>;
}

const maxGroups = 1000;
/**
 * Most new connections at once within `maxNewConnectionsPerSec`: a quarter of Node's default
 * listen backlog (511), so a burst of connects cannot overflow a stalled server's accept queue
 * (the kernel then drops the SYNs, and those connections wait a second or more).
 */
const maxConnectBurst = 128;

/** Applies defaults and validates; throws {@link SpillwayConfigError} naming the option. */
export function resolveOptions(input: LoadOptions): ResolvedOptions {
  const options = optionsObject('options', input);
  const url = parseUrl(options.url);
  const durationMs = timerMs('durationMs', positiveNumber('durationMs', options.durationMs));
  const arrival = oneOf('arrival', options.arrival ?? 'constant', arrivals);
  const method = checkMethod('method', options.method ?? 'GET');
  const runHeaders = checkHeaders('headers', options.headers);
  const deadlineMs = timerMs(
    'deadlineMs',
    nonNegativeNumber('deadlineMs', options.deadlineMs ?? 10_000),
  );
  const connection = oneOf('connection', options.connection ?? 'keep-alive', [
    'keep-alive',
    'new',
  ] as const);
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed)) throw new SpillwayConfigError('seed', 'an integer', seed);
  if (options.sloMs !== undefined) positiveNumber('sloMs', options.sloMs);

  let groupInputs: readonly LoadGroup[];
  if (options.groups !== undefined) {
    if (options.ratePerSec !== undefined) {
      throw new SpillwayConfigError(
        'ratePerSec',
        'absent when `groups` is given',
        options.ratePerSec,
      );
    }
    if (
      !Array.isArray(options.groups) ||
      options.groups.length === 0 ||
      options.groups.length > maxGroups
    ) {
      throw new SpillwayConfigError(
        'groups',
        `an array of 1 to ${maxGroups} groups`,
        options.groups,
      );
    }
    groupInputs = options.groups;
  } else {
    groupInputs = [
      { name: 'default', ratePerSec: positiveNumber('ratePerSec', options.ratePerSec) },
    ];
  }

  const names = new Set<string>();
  const run: GroupDefaults = {
    url,
    durationMs,
    deadlineMs,
    method,
    headers: runHeaders,
    arrival,
    connection,
    sloMs: options.sloMs,
    body: options.body,
    retry: options.retry,
    names,
  };
  const groups = groupInputs.map((raw, index) => resolveGroup(raw, run, index));

  const totalRate = groups.reduce((sum, g) => sum + g.ratePerSec, 0);
  const holdMs = (g: ResolvedGroup): number => (g.deadlineMs > 0 ? g.deadlineMs : 10_000);
  const sized =
    Math.ceil(groups.reduce((sum, g) => sum + (g.ratePerSec * holdMs(g)) / 1000, 0) * 1.25) + 32;
  const maxConnections = positiveInteger(
    'maxConnections',
    options.maxConnections ?? Math.min(sized, 10_000),
  );
  const attempts = (g: ResolvedGroup): number =>
    g.retry.kind === 'none' ? 1 : g.retry.retries + 1;
  const drainDefault = Math.min(
    maxTimerDelayMs,
    Math.max(...groups.map((g) => (g.deadlineMs > 0 ? g.deadlineMs * attempts(g) + 1000 : 10_000))),
  );
  const validity = optionsObject('validity', options.validity);
  const maxNewConnectionsPerSec =
    connection === 'new'
      ? Number.POSITIVE_INFINITY
      : options.maxNewConnectionsPerSec === Number.POSITIVE_INFINITY
        ? Number.POSITIVE_INFINITY
        : positiveNumber(
            'maxNewConnectionsPerSec',
            options.maxNewConnectionsPerSec ?? Math.min(2 * totalRate, 5000),
          );
  return {
    url,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || 80),
    durationMs,
    warmupMs: timerMs('warmupMs', nonNegativeNumber('warmupMs', options.warmupMs ?? 0)),
    groups,
    connection,
    maxConnections,
    warmConnections:
      connection === 'new'
        ? 0
        : Math.min(
            maxConnections,
            nonNegativeInteger(
              'warmConnections',
              options.warmConnections ?? Math.ceil(totalRate * 0.1) + 4,
            ),
          ),
    maxNewConnectionsPerSec,
    connectBurst: Math.min(maxNewConnectionsPerSec, maxConnectBurst),
    maxInFlight: positiveInteger('maxInFlight', options.maxInFlight ?? 2 * maxConnections),
    idleTimeoutMs: timerMs(
      'idleTimeoutMs',
      positiveNumber('idleTimeoutMs', options.idleTimeoutMs ?? 4000),
    ),
    drainMs: timerMs('drainMs', nonNegativeNumber('drainMs', options.drainMs ?? drainDefault)),
    seed,
    label: nonEmptyString(
      'label',
      options.label ??
        ([options.series, options.scenario].filter((s) => s !== undefined).join(' · ') || url.href),
    ),
    scenario: options.scenario,
    series: options.series,
    maxWindows: positiveInteger('maxWindows', options.maxWindows ?? 3600),
    validity: {
      maxLagP99Ms: positiveNumber('validity.maxLagP99Ms', validity.maxLagP99Ms ?? 5),
      maxCpuPercent: positiveNumber('validity.maxCpuPercent', validity.maxCpuPercent ?? 90),
      maxDroppedFraction: nonNegativeNumber(
        'validity.maxDroppedFraction',
        validity.maxDroppedFraction ?? 0,
      ),
    },
  };
}

function parseUrl(value: unknown): URL {
  let url: URL;
  try {
    url = value instanceof URL ? value : new URL(String(value));
  } catch {
    throw new SpillwayConfigError('url', 'an absolute http:// URL', value);
  }
  if (url.protocol !== 'http:') {
    throw new SpillwayConfigError(
      'url',
      'an http:// URL (the generator speaks plain HTTP/1.1)',
      value,
    );
  }
  return url;
}
