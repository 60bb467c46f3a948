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
import {
  checkNumber,
  type PolicySpec,
  type QuotaContext,
  type QuotaSpec,
} from './quota-options.js';

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
  /**
   * `RateLimit` as last formatted for a client with these numbers, and the whole remaining (-1:
   * left out) and seconds per policy it says: `quota-verdict.ts` builds it again only when they
   * change. One per set of numbers, so clients of one plan share it.
   */
  readonly lastNow: { readonly r: number[]; readonly t: number[]; text: string };
  /** Arrays of violated names per set of refusing policies (a bit per policy): built once. */
  readonly #violated: (readonly string[] | undefined)[] = [];

  constructor(policies: readonly RatePolicy[]) {
    this.policies = policies;
    this.ratePerMs = policies.map((p) => p.ratePerSec / 1000);
    this.burst = policies.map((p) => p.burst);
    this.quoted = policies.map((p) => policyName(p.name));
    this.policyField = policies.map((p) => formatRateLimitPolicy(p.name, p)).join(', ');
    this.lastNow = { r: policies.map(() => -2), t: policies.map(() => -2), text: '' };
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

/** A policy whose numbers may come from functions, with the options that name them. */
interface Source {
  readonly spec: PolicySpec;
  /** `default.quota[1].ratePerSec` / `.perWindow`, and `.burst` / `.windowMs`. */
  readonly firstOption: string;
  readonly secondOption: string;
}

/** Where a route's quota gets a client's {@link Limits}. */
export class LimitsSource {
  /** The one set when no number is a function; undefined otherwise. */
  readonly fixed: Limits | undefined;
  readonly #sources: readonly Source[];
  readonly #route: string;
  readonly #shared = new Map<string, Limits>();
  /** Rate and burst per policy, as the functions last gave them (reused, never kept). */
  readonly #numbers: number[];

  constructor(spec: QuotaSpec, route: string) {
    this.#route = route;
    this.#sources = spec.policies.map((p) => {
      const [first, second] =
        p.kind === 'rate' ? ['ratePerSec', 'burst'] : ['perWindow', 'windowMs'];
      return {
        spec: p,
        firstOption: `${p.option}.${first}`,
        secondOption: `${p.option}.${second}`,
      };
    });
    this.#numbers = new Array<number>(2 * spec.policies.length).fill(0);
    this.fixed = spec.perClient ? undefined : this.#build(this.#ask(undefined));
  }

  /**
   * The numbers for `key`, asking each function (what it throws goes to the caller): `current`
   * again when they have not changed, so asking again costs the functions and nothing more.
   */
  of(key: string, req: IncomingMessage, current?: Limits): Limits {
    if (this.fixed !== undefined) return this.fixed;
    const numbers = this.#ask({ key, req, route: this.#route });
    if (current !== undefined && sameNumbers(current, numbers)) return current;
    let signature = '';
    for (const n of numbers) signature += `${n};`;
    let limits = this.#shared.get(signature);
    if (limits === undefined) {
      limits = this.#build(numbers);
      if (this.#shared.size < maxShared) this.#shared.set(signature, limits);
    }
    return limits;
  }

  /** Each policy's rate and burst, a window's `perWindow` being its bucket's size. */
  #ask(context: QuotaContext | undefined): readonly number[] {
    const numbers = this.#numbers;
    this.#sources.forEach((source, i) => {
      const { spec } = source;
      const first = numberOf(spec.first, source.firstOption, context);
      const second = numberOf(spec.second, source.secondOption, context);
      numbers[2 * i] = spec.kind === 'rate' ? first : (first * 1000) / second;
      numbers[2 * i + 1] = spec.kind === 'rate' ? second : first;
    });
    return numbers;
  }

  #build(numbers: readonly number[]): Limits {
    return new Limits(
      this.#sources.map(({ spec }, i) =>
        Object.freeze({ name: spec.name, ratePerSec: numbers[2 * i]!, burst: numbers[2 * i + 1]! }),
      ),
    );
  }
}

function sameNumbers(limits: Limits, numbers: readonly number[]): boolean {
  const policies = limits.policies;
  for (let i = 0; i < policies.length; i++) {
    const p = policies[i]!;
    if (p.ratePerSec !== numbers[2 * i] || p.burst !== numbers[2 * i + 1]) return false;
  }
  return true;
}

function numberOf(
  value: PolicySpec['first'],
  option: string,
  context: QuotaContext | undefined,
): number {
  if (typeof value !== 'function') return value;
  return checkNumber(value(context!), option, true);
}
