/**
 * One group of a load run: its options, resolved over the run's, and its requests serialised
 * once per client identity. Bad options fail here, naming the group (`groups[i].…`).
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';
import {
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
import { timerMs } from './timer.js';

const maxClients = 10_000;

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

/** What a group takes from its run when it does not say otherwise. */
export interface GroupDefaults {
  readonly url: URL;
  readonly durationMs: number;
  readonly deadlineMs: number;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly arrival: Arrival;
  readonly connection: 'keep-alive' | 'new';
  readonly sloMs: number | undefined;
  readonly body: string | Uint8Array | undefined;
  readonly retry: RetryPolicy | undefined;
  /** Names taken by the groups before this one (a name must be unique). */
  readonly names: Set<string>;
}

/** The group at `index` with every default applied; throws {@link SpillwayConfigError}. */
export function resolveGroup(raw: LoadGroup, run: GroupDefaults, index: number): ResolvedGroup {
  const at = `groups[${index}]`;
  const g = optionsObject(at, raw);
  const name = nonEmptyString(`${at}.name`, g.name ?? `group-${index}`);
  if (run.names.has(name)) throw new SpillwayConfigError(`${at}.name`, 'a unique group name', name);
  run.names.add(name);
  const groupDeadline = timerMs(
    `${at}.deadlineMs`,
    nonNegativeNumber(`${at}.deadlineMs`, g.deadlineMs ?? run.deadlineMs),
  );
  const slo = g.sloMs ?? run.sloMs;
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
          run.durationMs - startMs,
          Number.isFinite(maxRequests) ? (maxRequests * 1000) / rate : 0,
        ),
    ),
  );
  const clients = positiveInteger(`${at}.clients`, g.clients ?? 1);
  if (clients > maxClients) {
    throw new SpillwayConfigError(`${at}.clients`, `at most ${maxClients}`, clients);
  }
  const groupMethod = g.method === undefined ? run.method : checkMethod(`${at}.method`, g.method);
  const path = checkPath(`${at}.path`, g.path ?? `${run.url.pathname}${run.url.search}`);
  const headers = mergeHeaders(run.headers, checkHeaders(`${at}.headers`, g.headers));
  const body = g.body ?? run.body;
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const requests = Array.from({ length: clients }, (_, client) => {
    const id = String(client);
    const sub = (s: string): string => s.replaceAll('{client}', id);
    return serialiseRequest(
      {
        method: groupMethod,
        path: sub(path),
        host: run.url.host,
        headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, sub(v)])),
        body: bytes,
        close: run.connection === 'new',
      },
      at,
    );
  });
  return {
    index,
    name,
    ratePerSec: rate,
    arrival: oneOf(`${at}.arrival`, g.arrival ?? run.arrival, arrivals),
    method: groupMethod,
    path,
    deadlineMs: groupDeadline,
    goodWithinMs: slo ?? (groupDeadline > 0 ? groupDeadline : Number.POSITIVE_INFINITY),
    clients,
    startMs,
    durationMs: groupDuration,
    maxRequests,
    retry: checkRetryPolicy(`${at}.retry`, g.retry ?? run.retry ?? { kind: 'none' }),
    noBody: groupMethod === 'HEAD',
    requests,
  };
}
