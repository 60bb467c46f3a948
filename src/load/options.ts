/**
 * The options of a load run, their defaults (all here, in one place) and their validation.
 * Bad options fail before any load is sent, with an error naming the option and the value.
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
  checkHeaders,
  checkMethod,
  checkPath,
  mergeHeaders,
  serialiseRequest,
} from './http-request.js';
import { checkRetryPolicy, type RetryPolicy } from './retry-policy.js';
import type { LoadProgress, WindowStats } from './result.js';
import { maxTimerDelayMs } from './timer.js';

/** One stream of requests with its own rate and shape: a tenant, a route, a canary. */
export interface LoadGroup {
  /** Name in tables and reports. @default `'default'` for a single group, else `group-<i>` */
  readonly name?: string;
  /** Mean arrivals per second. */
  readonly ratePerSec: number;
  /** @default the run's `arrival` */
  readonly arrival?: Arrival;
  /** @default the run's `method` */
  readonly method?: string;
  /** Path and query. `{client}` is replaced by the client index. @default the URL's path */
  readonly path?: string;
  /**
   * Extra headers, merged over the run's `headers`. `{client}` in a value is replaced by the
   * client index (0 … clients − 1), so one group can stand for many callers.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** Request body. @default the run's `body` */
  readonly body?: string | Uint8Array;
  /** Per-attempt client deadline in ms; 0 for none. @default the run's `deadlineMs` */
  readonly deadlineMs?: number;
  /** An `ok` counts as goodput only within this latency. @default the run's `sloMs` */
  readonly sloMs?: number;
  /** Distinct client identities the group's requests rotate through. @default 1 */
  readonly clients?: number;
  /** When the group starts, ms after the run starts. @default 0 */
  readonly startMs?: number;
  /** How long the group sends. @default the run's `durationMs` − `startMs` */
  readonly durationMs?: number;
  /** Stop after this many requests. @default no limit */
  readonly maxRequests?: number;
  /** @default the run's `retry` */
  readonly retry?: RetryPolicy;
}

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

/** A group with every default applied and its requests serialised. */
export interface ResolvedGroup {
  readonly index: number;
  readonly name: string;
  readonly ratePerSec: number;
  readonly arrival: Arrival;
  readonly method: string;
  readonly path: string;
  readonly deadlineMs: number;
  readonly goodWithinMs: number;
  readonly clients: number;
  readonly startMs: number;
  readonly durationMs: number;
  readonly maxRequests: number;
  readonly retry: RetryPolicy;
  readonly noBody: boolean;
  /** One serialised request per client identity. */
  readonly requests: readonly Buffer[];
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
const maxClients = 10_000;

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

  const host = url.host;
  const names = new Set<string>();
  const groups = groupInputs.map((raw, index): ResolvedGroup => {
    const at = `groups[${index}]`;
    const g = optionsObject(at, raw);
    const name = nonEmptyString(`${at}.name`, g.name ?? `group-${index}`);
    if (names.has(name)) throw new SpillwayConfigError(`${at}.name`, 'a unique group name', name);
    names.add(name);
    const groupDeadline = timerMs(
      `${at}.deadlineMs`,
      nonNegativeNumber(`${at}.deadlineMs`, g.deadlineMs ?? deadlineMs),
    );
    const slo = g.sloMs ?? options.sloMs;
    if (slo !== undefined) positiveNumber(`${at}.sloMs`, slo);
    const startMs = timerMs(`${at}.startMs`, nonNegativeNumber(`${at}.startMs`, g.startMs ?? 0));
    const rate = positiveNumber(`${at}.ratePerSec`, g.ratePerSec);
    const maxRequests =
      g.maxRequests === undefined
        ? Number.POSITIVE_INFINITY
        : positiveInteger(`${at}.maxRequests`, g.maxRequests);
    // A group starting at or after the end (a canary "after the rush") runs long enough to
    // send its maxRequests.
    const groupDuration = timerMs(
      `${at}.durationMs`,
      positiveNumber(
        `${at}.durationMs`,
        g.durationMs ??
          Math.max(
            durationMs - startMs,
            Number.isFinite(maxRequests) ? (maxRequests * 1000) / rate : 0,
          ),
      ),
    );
    const clients = positiveInteger(`${at}.clients`, g.clients ?? 1);
    if (clients > maxClients) {
      throw new SpillwayConfigError(`${at}.clients`, `at most ${maxClients}`, clients);
    }
    const groupMethod = g.method === undefined ? method : checkMethod(`${at}.method`, g.method);
    const path = checkPath(`${at}.path`, g.path ?? `${url.pathname}${url.search}`);
    const headers = mergeHeaders(runHeaders, checkHeaders(`${at}.headers`, g.headers));
    const body = g.body ?? options.body;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const requests = Array.from({ length: clients }, (_, client) => {
      const id = String(client);
      const sub = (s: string): string => s.replaceAll('{client}', id);
      return serialiseRequest(
        {
          method: groupMethod,
          path: sub(path),
          host,
          headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, sub(v)])),
          body: bytes,
          close: connection === 'new',
        },
        at,
      );
    });
    return {
      index,
      name,
      ratePerSec: rate,
      arrival: oneOf(`${at}.arrival`, g.arrival ?? arrival, arrivals),
      method: groupMethod,
      path,
      deadlineMs: groupDeadline,
      goodWithinMs: slo ?? (groupDeadline > 0 ? groupDeadline : Number.POSITIVE_INFINITY),
      clients,
      startMs,
      durationMs: groupDuration,
      maxRequests,
      retry: checkRetryPolicy(`${at}.retry`, g.retry ?? options.retry ?? { kind: 'none' }),
      noBody: groupMethod === 'HEAD',
      requests,
    };
  });

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

/**
 * A time that becomes (part of) one timer's delay: at most what a timer can wait, so no option
 * can make a timer fire at once and spin (see `timer.ts`).
 */
function timerMs(option: string, ms: number): number {
  if (ms > maxTimerDelayMs) {
    throw new SpillwayConfigError(
      option,
      `at most ${maxTimerDelayMs} ms (about 24.8 days, the longest a timer waits)`,
      ms,
    );
  }
  return ms;
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
