/**
 * A client's numbers under a quota's policies, and the strings they format to. Fixed numbers
 * make one set for every client, built at construction; numbers given by functions are asked
 * per client (the route's quota keeps the answer per key), and clients with the same numbers
 * — the same plan — share one set, so the `RateLimit-Policy` field is formatted once per plan.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { RatePolicy } from '../index.js';
import { formatRateLimitPolicy, policyName } from '../http/index.js';
import { checkNumber, type PolicySpec, type QuotaSpec } from './quota-options.js';

/** Every policy's numbers for one client, as its buckets and its fields need them. */
export class Limits {
  /** Per policy, what a store is asked with (name, rate, burst). */
  readonly policies: readonly RatePolicy[];
  /** Per policy, tokens per ms. */
  readonly ratePerMs: readonly number[];
  /** Per policy, the bucket's size. */
  readonly burst: readonly number[];
  /** Per policy, its name as an SF String (`"name"`). */
  readonly quoted: readonly string[];
  /** `RateLimit-Policy`: every policy, in order. */
  readonly policyField: string;
  /** Arrays of violated names per set of refusing policies (a bit per policy): built once. */
  readonly #violated: (readonly string[] | undefined)[] = [];

  constructor(policies: readonly RatePolicy[]) {
    this.policies = policies;
    this.ratePerMs = policies.map((p) => p.ratePerSec / 1000);
    this.burst = policies.map((p) => p.burst);
    this.quoted = policies.map((p) => policyName(p.name));
    this.policyField = policies.map((p) => formatRateLimitPolicy(p.name, p)).join(', ');
  }

  /** The names of the policies whose bits are set in `mask`, as one array per mask. */
  violated(mask: number): readonly string[] {
    let names = this.#violated[mask];
    if (names === undefined) {
      names = Object.freeze(
        this.policies.filter((_, i) => (mask & (1 << i)) !== 0).map((p) => p.name),
      );
      this.#violated[mask] = names;
    }
    return names;
  }
}

/** Distinct sets of numbers kept for sharing; past this, a client's set is its own. */
const maxShared = 1_024;

/** Where a route's quota gets a client's {@link Limits}. */
export class LimitsSource {
  /** The one set when no number is a function; undefined otherwise. */
  readonly fixed: Limits | undefined;
  readonly #spec: QuotaSpec;
  readonly #route: string;
  readonly #shared = new Map<string, Limits>();

  constructor(spec: QuotaSpec, route: string) {
    this.#spec = spec;
    this.#route = route;
    this.fixed = spec.perClient ? undefined : new Limits(spec.policies.map((p) => ratePolicy(p)));
  }

  /** The numbers for `key`, asking each function once (what it throws goes to the caller). */
  of(key: string, req: IncomingMessage): Limits {
    if (this.fixed !== undefined) return this.fixed;
    const context = { key, req, route: this.#route };
    const policies = this.#spec.policies.map((p) => ratePolicy(p, context));
    let signature = '';
    for (const p of policies) signature += `${p.ratePerSec}/${p.burst};`;
    let limits = this.#shared.get(signature);
    if (limits === undefined) {
      limits = new Limits(policies);
      if (this.#shared.size < maxShared) this.#shared.set(signature, limits);
    }
    return limits;
  }
}

/** A policy's numbers as a token bucket: a window of `perWindow` is a bucket of that size. */
function ratePolicy(
  spec: PolicySpec,
  context?: { key: string; req: IncomingMessage; route: string },
): RatePolicy {
  const [firstName, secondName] =
    spec.kind === 'rate' ? ['ratePerSec', 'burst'] : ['perWindow', 'windowMs'];
  const first = numberOf(spec.first, `${spec.option}.${firstName}`, context);
  const second = numberOf(spec.second, `${spec.option}.${secondName}`, context);
  return Object.freeze(
    spec.kind === 'rate'
      ? { name: spec.name, ratePerSec: first, burst: second }
      : { name: spec.name, ratePerSec: (first * 1000) / second, burst: first },
  );
}

function numberOf(
  value: PolicySpec['first'],
  option: string,
  context: { key: string; req: IncomingMessage; route: string } | undefined,
): number {
  if (typeof value !== 'function') return value;
  return checkNumber(value(context!), option, true);
}
