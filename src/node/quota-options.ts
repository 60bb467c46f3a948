/**
 * A route's quota as users write it — one policy, several, per-client numbers, `skip` and
 * `allow` — and its check: every option read once, at construction, into the policies the
 * route's quota enforces, with a `SpillwayConfigError` naming the option that is wrong.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { SpillwayConfigError, type RateStore } from '../index.js';

/** What a policy's number may depend on: the client, its request, the route. */
export interface QuotaContext {
  /** The client key the quota counts against. */
  readonly key: string;
  /** The request that first met the key (or met it after `refreshLimitsMs`). */
  readonly req: IncomingMessage;
  /** The route's name. */
  readonly route: string;
}

/**
 * A number, or a function giving it per client (a plan tier, say). The function is asked once
 * per key and its answer kept for `refreshLimitsMs`, so it is not a call per request.
 */
export type PerClient = number | ((context: QuotaContext) => number);

/** What every policy may set. */
interface PolicyBase {
  /**
   * The policy's name in `RateLimit-Policy`, `violated-policies` and a shared store. Required
   * when a quota has several policies. @default the route's name
   */
  readonly name?: string;
  /** Where this policy's buckets live (a Redis store, say). @default the quota's, else memory */
  readonly store?: RateStore;
}

/** A token bucket: `burst` requests at once, refilled at `ratePerSec`. */
export interface RatePolicyOptions extends PolicyBase {
  /** Requests per second per client. Required. */
  readonly ratePerSec: PerClient;
  /** Requests a client may make at once (the bucket's size), a whole number. Required. */
  readonly burst: PerClient;
  readonly perWindow?: never;
  readonly windowMs?: never;
}

/**
 * `perWindow` requests per `windowMs`, enforced as a token bucket of `perWindow` refilled at
 * `perWindow / windowMs` (GCRA), not as a fixed window: the quota comes back gradually, one
 * request every `windowMs / perWindow`, not all at once when a window ends (docs/http.md).
 */
export interface WindowPolicyOptions extends PolicyBase {
  /** Requests per window per client, a whole number. Required. */
  readonly perWindow: PerClient;
  /** The window, in ms (at least 1). Required. */
  readonly windowMs: PerClient;
  readonly ratePerSec?: never;
  readonly burst?: never;
}

/** One policy of a quota. */
export type QuotaPolicyOptions = RatePolicyOptions | WindowPolicyOptions;

/** What a quota's policies share. */
export interface QuotaSharedOptions {
  /** Most clients kept in memory (their buckets and their numbers). @default 10_000 */
  readonly maxKeys?: number;
  /** Where the policies' buckets live, unless a policy names its own. @default in memory */
  readonly store?: RateStore;
  /** Requests for which the quota is not asked at all (nor its store). @default none */
  readonly skip?: (req: IncomingMessage) => boolean;
  /**
   * Clients the quota never counts: client keys, IP addresses, or CIDR ranges (`10.0.0.0/8`,
   * `2001:db8::/32`) matched against the client's address (under the guard's `trustProxy`).
   * @default []
   */
  readonly allow?: readonly string[];
  /**
   * How long a client's numbers from a function are kept before the function is asked again,
   * in ms (0: every request). A client's numbers also go when its key leaves the `maxKeys`
   * bound. @default 60_000
   */
  readonly refreshLimitsMs?: number;
}

/**
 * A route's quota: one policy (with the shared options beside it), several (`[p1, p2]`), or
 * several with shared options (`{ policies: [p1, p2], allow }`). Every policy must admit a
 * request; a refusal names those that did not.
 */
export type QuotaOptions =
  | (QuotaPolicyOptions & QuotaSharedOptions)
  | readonly QuotaPolicyOptions[]
  | (QuotaSharedOptions & { readonly policies: readonly QuotaPolicyOptions[] });

/** One policy, checked: its fixed numbers, or the functions that give them. */
export interface PolicySpec {
  readonly name: string;
  /** Where it is named in errors: `default.quota[1]`. */
  readonly option: string;
  readonly kind: 'rate' | 'window';
  /** `ratePerSec`, or `perWindow`. */
  readonly first: PerClient;
  /** `burst`, or `windowMs`. */
  readonly second: PerClient;
  readonly store: RateStore | undefined;
}

/** A quota, checked. */
export interface QuotaSpec {
  readonly policies: readonly PolicySpec[];
  readonly maxKeys: number;
  readonly skip: ((req: IncomingMessage) => boolean) | undefined;
  readonly allow: readonly string[];
  readonly refreshLimitsMs: number;
  /** Whether any number is a function. */
  readonly perClient: boolean;
}

const policyShape = '{ ratePerSec, burst } or { perWindow, windowMs }';

/** Checks a route's `quota` option; `option` names it in errors (`default.quota`). */
export function quotaSpec(value: unknown, route: string, option: string): QuotaSpec {
  if (typeof value !== 'object' || value === null) {
    throw new SpillwayConfigError(option, `false, a policy ${policyShape}, or several`, value);
  }
  const shared = (Array.isArray(value) ? {} : value) as QuotaSharedOptions & {
    readonly policies?: unknown;
  };
  let list: readonly unknown[];
  let at: (i: number) => string;
  if (Array.isArray(value)) {
    list = value as unknown[];
    at = (i) => `${option}[${i}]`;
  } else if ('policies' in shared) {
    if (!Array.isArray(shared.policies)) {
      throw new SpillwayConfigError(`${option}.policies`, 'an array of policies', shared.policies);
    }
    // A policy's number beside `policies` would be ignored: say so instead.
    const stray = ['ratePerSec', 'burst', 'perWindow', 'windowMs', 'name'].find((k) => k in shared);
    if (stray !== undefined) {
      throw new SpillwayConfigError(
        `${option}.${stray}`,
        'inside one of `policies`, not beside them',
        (shared as Record<string, unknown>)[stray],
      );
    }
    list = shared.policies as unknown[];
    at = (i) => `${option}.policies[${i}]`;
  } else {
    list = [value];
    at = () => option;
  }
  if (list.length === 0 || list.length > 8) {
    throw new SpillwayConfigError(option, 'from 1 to 8 policies', list.length);
  }
  const sharedStore = storeOf(shared.store, `${option}.store`);
  const names = new Set<string>();
  const policies = list.map((p, i) => {
    const spec = policySpec(p, at(i), { route, several: list.length > 1, sharedStore });
    if (names.has(spec.name)) {
      throw new SpillwayConfigError(
        `${at(i)}.name`,
        'unique among the quota’s policies',
        spec.name,
      );
    }
    names.add(spec.name);
    return spec;
  });
  const maxKeys = shared.maxKeys ?? 10_000;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
    throw new SpillwayConfigError(`${option}.maxKeys`, 'a whole number of 1 or more', maxKeys);
  }
  if (shared.skip !== undefined && typeof shared.skip !== 'function') {
    throw new SpillwayConfigError(`${option}.skip`, 'a function of the request', shared.skip);
  }
  const allow = shared.allow ?? [];
  if (!Array.isArray(allow)) {
    throw new SpillwayConfigError(`${option}.allow`, 'an array of keys and CIDR ranges', allow);
  }
  const refreshLimitsMs = shared.refreshLimitsMs ?? 60_000;
  if (typeof refreshLimitsMs !== 'number' || !(refreshLimitsMs >= 0)) {
    throw new SpillwayConfigError(
      `${option}.refreshLimitsMs`,
      'a number of ms, 0 or more',
      refreshLimitsMs,
    );
  }
  return {
    policies,
    maxKeys,
    skip: shared.skip,
    allow: allow as readonly string[],
    refreshLimitsMs,
    perClient: policies.some(
      (p) => typeof p.first === 'function' || typeof p.second === 'function',
    ),
  };
}

function policySpec(
  value: unknown,
  option: string,
  context: { route: string; several: boolean; sharedStore: RateStore | undefined },
): PolicySpec {
  if (typeof value !== 'object' || value === null) {
    throw new SpillwayConfigError(option, `a policy ${policyShape}`, value);
  }
  const p = value as Partial<Record<'ratePerSec' | 'burst' | 'perWindow' | 'windowMs', unknown>> &
    PolicyBase;
  const rate = p.ratePerSec !== undefined || p.burst !== undefined;
  const window = p.perWindow !== undefined || p.windowMs !== undefined;
  if (rate === window) {
    throw new SpillwayConfigError(option, `either ${policyShape}, not both or neither`, value);
  }
  const [firstName, secondName] = rate ? ['ratePerSec', 'burst'] : ['perWindow', 'windowMs'];
  const first = rate ? p.ratePerSec : p.perWindow;
  const second = rate ? p.burst : p.windowMs;
  if (typeof first !== 'function') checkNumber(first, `${option}.${firstName}`);
  if (typeof second !== 'function') checkNumber(second, `${option}.${secondName}`);
  if (p.name !== undefined && (typeof p.name !== 'string' || p.name.length === 0)) {
    throw new SpillwayConfigError(`${option}.name`, 'a non-empty string', p.name);
  }
  if (p.name === undefined && context.several) {
    throw new SpillwayConfigError(
      `${option}.name`,
      'a name of its own when a quota has several policies',
      p.name,
    );
  }
  return {
    name: p.name ?? context.route,
    option,
    kind: rate ? 'rate' : 'window',
    first: first as PerClient,
    second: second as PerClient,
    store: storeOf(p.store, `${option}.store`) ?? context.sharedStore,
  };
}

/**
 * Checks one of a policy's numbers, fixed or given by its function (`given`): `option` ends
 * with the number's name. `burst` and `perWindow` are whole numbers; `windowMs` at least 1.
 */
export function checkNumber(value: unknown, option: string, given = false): number {
  const field = option.slice(option.lastIndexOf('.') + 1);
  const n = typeof value === 'number' && Number.isFinite(value) ? value : Number.NaN;
  let what: string | undefined;
  if (field === 'burst' || field === 'perWindow') {
    if (!(Number.isSafeInteger(n) && n >= 1)) what = 'a whole number of 1 or more';
  } else if (field === 'windowMs') {
    if (!(n >= 1)) what = 'a finite number of ms, 1 or more';
  } else if (!(n > 0)) what = 'a finite number greater than 0';
  if (what !== undefined) {
    const from = given ? ' (what its function gave)' : ' (or a function giving one)';
    throw new SpillwayConfigError(option, what + from, value);
  }
  return n;
}

function storeOf(store: unknown, option: string): RateStore | undefined {
  if (store === undefined) return undefined;
  if (
    typeof store !== 'object' ||
    store === null ||
    typeof (store as RateStore).take !== 'function'
  ) {
    throw new SpillwayConfigError(
      option,
      'a RateStore (an object with take(key, n, policy))',
      store,
    );
  }
  return store as RateStore;
}
