/**
 * The asks of one store, built once per policy instead of once per decision. A service passes
 * the same few policies on every decision; building the ask, its key's fixed parts and the
 * strings it is sent with each time made a few hundred bytes of garbage per decision, and the
 * garbage sets how often the young generation is collected — a pause every decision in flight
 * waits out (BENCHMARKS.md, S7: p99 at half rate). Key management (`peek`, `reset`, `adjust`)
 * takes its asks from here too, so it builds exactly the keys the decisions use.
 *
 * Kept per policy name and numbers: at most {@link maxMemoNames} names per kind of ask (past it
 * the oldest name leaves and is built again when it comes back), and under each name the last
 * {@link maxVariants} sets of numbers, so a quota whose numbers depend on the client (a few
 * tiers under one name) finds each tier's ask. A policy changed in place is looked up by its
 * new numbers; a name with more sets of numbers in use than that builds some asks per decision,
 * as every decision did before.
 *
 * @module
 */
import type { RatePolicy } from '../core/rate-store/rate-store.js';
import { BoundedMap } from './bounded-map.js';
import { redisKeyFor } from './keys.js';
import {
  takeAsk,
  windowAsk,
  type RateAlgorithm,
  type RateAsk,
  type WindowPolicy,
} from './rate-ask.js';

/** A {@link RateAsk} with what every decision on it keys by and sends, computed once. */
export interface PreparedAsk extends RateAsk {
  /** The Redis key of a client id under this ask's name and kind. */
  readonly keyOf: (id: string) => string;
  /** `period` as sent to Redis. */
  readonly periodArg: string;
  /**
   * Appended to the Redis key to key the local caches: the limit and period are part of it,
   * so a changed limit never meets an old entry.
   */
  readonly cacheSuffix: string;
}

/** Policy names remembered per kind of ask (a backstop: applications have a handful). */
export const maxMemoNames = 256;

/** Sets of numbers remembered per policy name, the most recently built first. */
export const maxVariants = 4;

interface Memo {
  /** The policy's two numbers the ask was built from. */
  readonly a: unknown;
  readonly b: unknown;
  readonly ask: PreparedAsk;
}

/** The prepared asks of one store (its prefix and algorithm). */
export class AskMemo {
  readonly #prefix: string;
  readonly #algorithm: RateAlgorithm;
  readonly #takes = new BoundedMap<Memo[]>(maxMemoNames);
  readonly #fixed = new BoundedMap<Memo[]>(maxMemoNames);
  readonly #sliding = new BoundedMap<Memo[]>(maxMemoNames);

  constructor(prefix: string, algorithm: RateAlgorithm) {
    this.#prefix = prefix;
    this.#algorithm = algorithm;
  }

  /** What `take` asks for `policy` under the store's algorithm. */
  take(policy: RatePolicy): PreparedAsk {
    const { name, ratePerSec, burst } = policy;
    const variants = this.#takes.get(name);
    const found = variants === undefined ? undefined : find(variants, ratePerSec, burst);
    if (found !== undefined) return found;
    const ask = this.#prepare(takeAsk(this.#algorithm, policy));
    keep(this.#takes, name, { a: ratePerSec, b: burst, ask });
    return ask;
  }

  /** What a fixed or sliding window asks for `policy` (an argument error if it is unusable). */
  window(policy: WindowPolicy, fixed: boolean): PreparedAsk {
    const memos = fixed ? this.#fixed : this.#sliding;
    const { name, limit, windowMs } = policy;
    const variants = memos.get(name);
    const found = variants === undefined ? undefined : find(variants, limit, windowMs);
    if (found !== undefined) return found;
    const ask = this.#prepare(windowAsk(policy, fixed));
    keep(memos, name, { a: limit, b: windowMs, ask });
    return ask;
  }

  #prepare(ask: RateAsk): PreparedAsk {
    return Object.freeze({
      ...ask,
      keyOf: redisKeyFor(this.#prefix, ask.name, ask.kind),
      periodArg: String(ask.period),
      cacheSuffix: `\u0000${ask.limit}\u0000${ask.period}`,
    });
  }
}

/** The ask built for the numbers `a` and `b`, if it is still kept. */
function find(variants: readonly Memo[], a: unknown, b: unknown): PreparedAsk | undefined {
  for (const m of variants) if (m.a === a && m.b === b) return m.ask;
  return undefined;
}

/** Keeps `memo` first under `name`, dropping the oldest set of numbers past {@link maxVariants}. */
function keep(memos: BoundedMap<Memo[]>, name: string, memo: Memo): void {
  const variants = memos.get(name);
  if (variants === undefined) {
    memos.set(name, [memo]);
    return;
  }
  variants.unshift(memo);
  if (variants.length > maxVariants) variants.pop();
}
