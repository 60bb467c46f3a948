/**
 * Service-time distributions of a simulated server: constant, exponential, or a recorded
 * histogram (what `spillway load` or a user's own metrics measured), sampled from the run's
 * seeded generator.
 *
 * @module
 */
import { SpillwayConfigError } from '../index.js';
import { positiveNumber } from '../core/internal/validate.js';
import { exponential, type Random } from './random.js';

/** How long one request holds a server slot, in ms. */
export type ServiceTime =
  | { readonly kind: 'constant'; readonly ms: number }
  | { readonly kind: 'exponential'; readonly meanMs: number }
  | {
      /** Buckets of a recorded histogram: `count` requests took up to `upToMs` (ascending). */
      readonly kind: 'histogram';
      readonly buckets: readonly { readonly upToMs: number; readonly count: number }[];
    };

/** Most buckets a histogram may have. */
export const maxHistogramBuckets = 10_000;

/** A sampler for `t` (validated here, naming the option `option`) and its mean in ms. */
export function serviceSampler(
  option: string,
  t: ServiceTime,
  random: Random,
): { readonly sample: () => number; readonly meanMs: number } {
  if (typeof t !== 'object' || t === null) {
    throw new SpillwayConfigError(option, 'a service time ({ kind, … })', t);
  }
  if (t.kind === 'constant') {
    const ms = positiveNumber(`${option}.ms`, t.ms);
    return { sample: () => ms, meanMs: ms };
  }
  if (t.kind === 'exponential') {
    const mean = positiveNumber(`${option}.meanMs`, t.meanMs);
    return { sample: () => exponential(random, mean), meanMs: mean };
  }
  if (t.kind === 'histogram') return histogram(`${option}.buckets`, t.buckets, random);
  const kind = (t as { kind?: unknown }).kind;
  throw new SpillwayConfigError(`${option}.kind`, "'constant', 'exponential' or 'histogram'", kind);
}

/** Inverse-CDF sampling, uniform within a bucket (from the previous bound to `upToMs`). */
function histogram(
  option: string,
  buckets: readonly { readonly upToMs: number; readonly count: number }[],
  random: Random,
): { readonly sample: () => number; readonly meanMs: number } {
  if (!Array.isArray(buckets) || buckets.length === 0 || buckets.length > maxHistogramBuckets) {
    throw new SpillwayConfigError(option, `1 to ${maxHistogramBuckets} buckets`, buckets);
  }
  const bounds: number[] = [];
  const cumulative: number[] = [];
  let total = 0;
  let mean = 0;
  let previous = 0;
  const list = buckets as readonly ({ upToMs?: unknown; count?: unknown } | undefined)[];
  for (const [i, b] of list.entries()) {
    const upTo = positiveNumber(`${option}[${i}].upToMs`, b?.upToMs);
    const count = b?.count;
    if (typeof count !== 'number' || !Number.isFinite(count) || count < 0) {
      throw new SpillwayConfigError(`${option}[${i}].count`, 'a finite number of 0 or more', count);
    }
    if (upTo <= previous && i > 0) {
      throw new SpillwayConfigError(`${option}[${i}].upToMs`, `more than ${previous}`, upTo);
    }
    total += count;
    mean += count * ((previous + upTo) / 2);
    bounds.push(upTo);
    cumulative.push(total);
    previous = upTo;
  }
  if (!(total > 0)) throw new SpillwayConfigError(option, 'buckets with some count', buckets);
  return {
    meanMs: mean / total,
    sample: () => {
      const r = random() * total;
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid]! > r) hi = mid;
        else lo = mid + 1;
      }
      const from = lo === 0 ? 0 : bounds[lo - 1]!;
      return from + random() * (bounds[lo]! - from);
    },
  };
}
