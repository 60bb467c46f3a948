/**
 * Per-route admission settings: which requests a route covers, and its own concurrency limit
 * and line, quota, deadline and criticality policy. Routes are resolved once per request;
 * exact paths are a map lookup, patterns are tried in order.
 *
 * @module
 */
import { TenantShares, type TenantShareOptions } from './tenant-shares.js';
import type { IncomingMessage } from 'node:http';
import {
  SpillwayConfigError,
  criticalities,
  criticalityRank,
  type Clock,
  type Criticality,
  type LimitSource,
  type QueueOrder,
} from '../index.js';
import { ownedConcurrencyLimit, type OwnedConcurrencyLimit } from '../core/internal/owned.js';
import { quotaSpec, type QuotaOptions } from './quota-options.js';
import { RouteQuota, type RateLimitHeaders } from './route-quota.js';
import {
  Storm,
  retryStormSettings,
  type RetryStormOptions,
} from '../core/retry-storm/retry-storm.js';

export type { QuotaOptions } from './quota-options.js';

/** How criticality shapes admission on a route. */
export interface CriticalityPolicy {
  /** The most critical value a client may claim in `Spillway-Criticality`. @default 'critical' */
  readonly ceiling?: Criticality;
  /** The criticality of requests that do not say. @default 'critical' */
  readonly default?: Criticality;
  /**
   * Share of the line (0–1) each criticality may fill when every slot is taken; beyond it the
   * request is shed. Must not increase from `critical-plus` down to `sheddable`.
   * @default { 'critical-plus': 1, critical: 1, 'sheddable-plus': 0.5, sheddable: 0 }
   */
  readonly lineShare?: Partial<Record<Criticality, number>>;
}

/** Settings a route may override; the guard's top-level options give the defaults. */
export interface RouteSettings {
  /** In-flight requests on the route; `false` for no limit. @default 100 */
  readonly limit?: number | LimitSource | false;
  /** Requests waiting for a slot. @default 0 */
  readonly maxQueue?: number;
  /** Longest wait for a slot, in ms. @default 100 */
  readonly maxQueueWaitMs?: number;
  /** Line discipline. @default 'fifo' */
  readonly order?: QueueOrder;
  /**
   * Per-client quota: one policy (`{ ratePerSec, burst }` or `{ perWindow, windowMs }`), or
   * several that must all admit; `false` for none. @default false
   */
  readonly quota?: QuotaOptions | false;
  /**
   * Where a quota route sends draft-10's `RateLimit-Policy` and `RateLimit`: on every response
   * (admitted requests too, so clients can pace themselves before they are refused), on its
   * 429s only, or never. @default 'always'
   */
  readonly rateLimitHeaders?: RateLimitHeaders;
  /** The server's own maximum (and default) deadline per request, in ms. @default 30_000 */
  readonly deadlineMs?: number;
  /** Criticality policy. */
  readonly criticality?: CriticalityPolicy;
  /**
   * Isolation of capacity: no client key holds more than `maxShare` of the route's slots
   * (`borrow`: unless the slot is free and nobody waits); `false` for none. @default false
   */
  readonly tenantShare?: TenantShareOptions | false;
  /**
   * The retry-storm signal: while retries (`Spillway-Attempt` ≥ 2) are more than `retryShare`
   * of the route's arrivals (decayed over `halfLifeMs`, at least `minArrivals` of them), its
   * refusals for load (`capacity`, `shed`, `overloaded`) say `never` instead of `later` or
   * `elsewhere`, until the share falls to `leaveShare`; `false` to keep them as they are. A
   * route's value replaces the guard's. See docs/http.md, "Retry storms".
   * @default {} (on: retryShare 0.5, leaveShare 0.3, minArrivals 20, halfLifeMs 2_000)
   */
  readonly retryStorm?: Omit<RetryStormOptions, 'clock'> | false;
}

/** A route: what it matches, and its settings. */
export interface RouteOptions extends RouteSettings {
  /**
   * `'/exact'`, `'/prefix/*'`, a RegExp tested against the path, or a function of the request
   * and its path. Required.
   */
  readonly match: string | RegExp | ((req: IncomingMessage, path: string) => boolean);
  /** Only this method (upper-case). @default any */
  readonly method?: string;
  /** Names the route in logs, events and quota policies. @default the match, as text */
  readonly name?: string;
  /** Never counted or limited (health checks). @default false */
  readonly exempt?: boolean;
}

/** A resolved route with its live limiter and buckets. */
export interface Route {
  readonly name: string;
  readonly exempt: boolean;
  readonly limiter: OwnedConcurrencyLimit | undefined;
  readonly maxQueue: number;
  readonly quota: RouteQuota | undefined;
  readonly deadlineMs: number;
  readonly ceilingRank: number;
  readonly defaultCriticality: Criticality;
  /** Waiters allowed per criticality rank (share × maxQueue). */
  readonly lineAllowance: readonly number[];
  /** Slots held per client key, when the route isolates them (`tenantShare`). */
  readonly tenants: TenantShares | undefined;
  /** The retry-storm signal over the route's arrivals, unless turned off (`retryStorm`). */
  readonly storm: Storm | undefined;
}

const defaultShares: Record<Criticality, number> = {
  'critical-plus': 1,
  critical: 1,
  'sheddable-plus': 0.5,
  sheddable: 0,
};

/** Builds a live route from settings, falling back to `base` for anything unset. */
export function buildRoute(
  name: string,
  settings: RouteSettings & { readonly exempt?: boolean },
  context: { readonly base: RouteSettings; readonly clock: Clock },
): Route {
  const { base, clock } = context;
  const pick = <K extends keyof RouteSettings>(key: K): RouteSettings[K] =>
    settings[key] ?? base[key];
  const limitOption = pick('limit') ?? 100;
  const maxQueue = pick('maxQueue') ?? 0;
  const limiter =
    limitOption === false
      ? undefined
      : ownedConcurrencyLimit({
          limit: limitOption,
          maxQueue,
          maxQueueWaitMs: pick('maxQueueWaitMs') ?? 100,
          order: pick('order') ?? 'fifo',
          clock,
        });
  const headers = pick('rateLimitHeaders') ?? 'always';
  if (headers !== 'always' && headers !== 'refusals-only' && headers !== false) {
    throw new SpillwayConfigError(
      `${name}.rateLimitHeaders`,
      "'always', 'refusals-only' or false",
      headers,
    );
  }
  const quotaOption = pick('quota') ?? false;
  const quota =
    quotaOption === false
      ? undefined
      : new RouteQuota(quotaSpec(quotaOption, name, `${name}.quota`), {
          route: name,
          clock,
          headers,
        });
  const shareOption = pick('tenantShare') ?? false;
  if (shareOption !== false && limiter === undefined) {
    throw new SpillwayConfigError(
      `${name}.tenantShare`,
      'used with a limit (there are no slots to share)',
      shareOption,
    );
  }
  const tenants = shareOption === false ? undefined : new TenantShares(name, shareOption);
  const stormOption = pick('retryStorm') ?? {};
  const storm =
    stormOption === false
      ? undefined
      : new Storm(retryStormSettings(stormOption, `${name}.retryStorm.`), clock);
  const deadlineMs = pick('deadlineMs') ?? 30_000;
  if (typeof deadlineMs !== 'number' || !(deadlineMs > 0) || !Number.isFinite(deadlineMs)) {
    throw new SpillwayConfigError(
      `${name}.deadlineMs`,
      'a finite number greater than 0',
      deadlineMs,
    );
  }
  const policy = { ...base.criticality, ...settings.criticality };
  const ceiling = policy.ceiling ?? 'critical';
  const fallback = policy.default ?? 'critical';
  for (const [option, value] of [
    ['ceiling', ceiling],
    ['default', fallback],
  ] as const) {
    if (criticalityRank(value) === -1) {
      throw new SpillwayConfigError(
        `criticality.${option}`,
        `one of ${criticalities.join(', ')}`,
        value,
      );
    }
  }
  const shares = { ...defaultShares, ...policy.lineShare };
  let previous = 1;
  const lineAllowance = criticalities.map((c) => {
    const share = shares[c];
    if (typeof share !== 'number' || !(share >= 0 && share <= 1)) {
      throw new SpillwayConfigError(`criticality.lineShare.${c}`, 'a number from 0 to 1', share);
    }
    if (share > previous) {
      throw new SpillwayConfigError(
        `criticality.lineShare.${c}`,
        `at most the share of more critical work (${previous}); less critical work is never favoured`,
        share,
      );
    }
    previous = share;
    return Math.floor(share * maxQueue);
  });
  return {
    name,
    exempt: settings.exempt === true,
    limiter,
    maxQueue,
    quota,
    deadlineMs,
    ceilingRank: criticalityRank(ceiling),
    defaultCriticality: fallback,
    lineAllowance,
    tenants,
    storm,
  };
}

type Matcher = (req: IncomingMessage, path: string) => boolean;

/** Finds the route for a request: exact paths by map, then patterns in order, else the default. */
export class RouteTable {
  readonly #exact = new Map<string, { method: string | undefined; route: Route }[]>();
  readonly #patterns: { method: string | undefined; test: Matcher; route: Route }[] = [];
  readonly #byName = new Map<string, Route>();
  readonly fallback: Route;

  constructor(fallback: Route) {
    this.fallback = fallback;
    this.#byName.set(fallback.name, fallback);
  }

  /** Adds a route; `match` as in {@link RouteOptions}. */
  add(match: RouteOptions['match'], method: string | undefined, route: Route): void {
    if (this.#byName.has(route.name)) {
      throw new SpillwayConfigError('routes[].name', 'unique across routes', route.name);
    }
    this.#byName.set(route.name, route);
    if (typeof match === 'string' && !match.includes('*')) {
      const list = this.#exact.get(match) ?? [];
      list.push({ method, route });
      this.#exact.set(match, list);
      return;
    }
    let test: Matcher;
    if (typeof match === 'string') {
      const prefix = match.slice(0, match.indexOf('*'));
      test = (_req, path) => path.startsWith(prefix);
    } else if (match instanceof RegExp) {
      test = (_req, path) => {
        match.lastIndex = 0;
        return match.test(path);
      };
    } else if (typeof match === 'function') {
      test = match;
    } else {
      throw new SpillwayConfigError(
        'routes[].match',
        "a path ('/x', '/x/*'), a RegExp or a function",
        match,
      );
    }
    this.#patterns.push({ method, test, route });
  }

  /** Every route's name, the fallback's first. */
  names(): string[] {
    return [...this.#byName.keys()];
  }

  /** A route by its name (adapters that know the route up front use this). */
  byName(name: string): Route | undefined {
    return this.#byName.get(name);
  }

  /** The route serving `req`. */
  resolve(req: IncomingMessage, path: string): Route {
    const method = req.method;
    const exact = this.#exact.get(path);
    if (exact !== undefined) {
      for (const e of exact) if (e.method === undefined || e.method === method) return e.route;
    }
    for (const p of this.#patterns) {
      if ((p.method === undefined || p.method === method) && p.test(req, path)) return p.route;
    }
    return this.fallback;
  }
}
