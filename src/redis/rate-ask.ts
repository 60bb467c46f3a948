/**
 * What one rate decision asks of Redis: which script, which key kind, and the period and limit
 * it is sent with. Each algorithm the store runs maps its policy here, so the decision path
 * below it never branches on the algorithm.
 *
 * @module
 */
import { SpillwayArgumentError } from '../core/errors/argument-error.js';
import type { RatePolicy } from '../core/rate-store/rate-store.js';
import type { KeyKind } from './keys.js';
import { fixedWindowScript, gcraScript, slidingWindowScript } from './rate-scripts.js';
import type { RedisScript } from './redis-script.js';

/** Which algorithm `take` runs. */
export type RateAlgorithm = 'gcra' | 'fixed-window' | 'sliding-window';

/** A window limit: at most `limit` per `windowMs`. */
export interface WindowPolicy {
  /** Names the limiter; part of every key. */
  readonly name: string;
  /** Most admissions per window. */
  readonly limit: number;
  /** Window length in ms (windows are aligned on Redis's clock). */
  readonly windowMs: number;
}

/** One decision's parameters, whichever the algorithm. */
export interface RateAsk {
  readonly script: RedisScript;
  readonly kind: KeyKind;
  readonly name: string;
  /** GCRA: emission interval in µs; windows: window in ms (fractions kept). */
  readonly period: number;
  readonly limit: number;
  /** For the `local` fallback. */
  readonly ratePerSec: number;
}

/** What `take` asks under `algorithm`: a token bucket's `burst` at `ratePerSec`. */
export function takeAsk(algorithm: RateAlgorithm, policy: RatePolicy): RateAsk {
  const { name, ratePerSec, burst } = policy;
  if (algorithm === 'gcra') {
    return {
      script: gcraScript,
      kind: 'gcra',
      name,
      period: 1e6 / ratePerSec,
      limit: burst,
      ratePerSec,
    };
  }
  // Exactly burst / ratePerSec, never rounded up to whole ms: a longer window would refuse
  // a client at exactly ratePerSec. (At least a microsecond, Redis's clock resolution.)
  const windowMs = Math.max(0.001, (burst * 1000) / ratePerSec);
  return askForWindow({ name, limit: burst, windowMs }, algorithm === 'fixed-window');
}

/** What a caller's window policy asks (an argument error if its `windowMs` is not usable). */
export function windowAsk(policy: WindowPolicy, fixed: boolean): RateAsk {
  return askForWindow(checkedWindow(policy), fixed);
}

/** `policy`, once its `windowMs` is a finite number of 1 or more (an argument error if not). */
function checkedWindow(policy: WindowPolicy): WindowPolicy {
  const windowMs = policy.windowMs;
  if (!(windowMs >= 1) || !Number.isFinite(windowMs)) {
    throw new SpillwayArgumentError('policy.windowMs', 'a finite number of 1 or more', windowMs);
  }
  return policy;
}

/** A window decision's parameters; the window goes to Redis as given, fractions included. */
function askForWindow(policy: WindowPolicy, fixed: boolean): RateAsk {
  const { name, limit, windowMs } = policy;
  return {
    script: fixed ? fixedWindowScript : slidingWindowScript,
    kind: fixed ? 'fw' : 'sw',
    name,
    period: windowMs,
    limit,
    ratePerSec: (limit * 1000) / windowMs,
  };
}
