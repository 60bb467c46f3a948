/**
 * Open-loop arrivals of simulated users: constant spacing or Poisson, optionally in bursts,
 * with the rate changing at given times (a load spike is a step up and back). One timer is
 * pending per arrival stream at any moment, so the event list stays small however long the run.
 *
 * @module
 */
import { SpillwayConfigError } from '../index.js';
import { nonNegativeNumber, oneOf, positiveInteger } from '../core/internal/validate.js';
import type { SimClock } from './sim-clock.js';
import { exponential, type Random } from './random.js';

/** How users arrive. */
export interface ArrivalOptions {
  /** User actions per second (of simulated time). */
  readonly ratePerSec: number;
  /** Evenly spaced, or a Poisson process. @default 'poisson' */
  readonly process?: 'constant' | 'poisson';
  /** Users arriving together at each arrival instant (a burst). @default 1 */
  readonly burst?: number;
  /** Rate changes: from `atMs` on, `ratePerSec` (0 pauses arrivals). @default [] */
  readonly changes?: readonly { readonly atMs: number; readonly ratePerSec: number }[];
  /** When arrivals begin, in ms of simulated time. @default 0 */
  readonly startMs?: number;
  /** When arrivals stop. @default the run's `durationMs` */
  readonly stopMs?: number;
}

/** Most rate changes one stream may have. */
export const maxRateChanges = 1_000;

/** Checked arrival options. */
export interface Arrivals {
  readonly process: 'constant' | 'poisson';
  readonly burst: number;
  readonly startMs: number;
  readonly stopMs: number;
  /** Rate steps, ascending, the first at `startMs`. */
  readonly steps: readonly { readonly atMs: number; readonly ratePerSec: number }[];
}

/** Validates `o` (options named under `option`). */
export function arrivalsOf(option: string, o: ArrivalOptions, durationMs: number): Arrivals {
  if (typeof o !== 'object' || o === null) {
    throw new SpillwayConfigError(option, 'arrival options', o);
  }
  const rate = nonNegativeNumber(`${option}.ratePerSec`, o.ratePerSec);
  const process = oneOf(`${option}.process`, o.process ?? 'poisson', ['constant', 'poisson']);
  const burst = positiveInteger(`${option}.burst`, o.burst ?? 1);
  const startMs = nonNegativeNumber(`${option}.startMs`, o.startMs ?? 0);
  const stopMs = nonNegativeNumber(`${option}.stopMs`, o.stopMs ?? durationMs);
  const changes = o.changes ?? [];
  if (!Array.isArray(changes) || changes.length > maxRateChanges) {
    throw new SpillwayConfigError(
      `${option}.changes`,
      `at most ${maxRateChanges} changes`,
      changes,
    );
  }
  const steps = [{ atMs: startMs, ratePerSec: rate }];
  for (const [i, c] of (changes as ArrivalOptions['changes'] & object).entries()) {
    const atMs = nonNegativeNumber(`${option}.changes[${i}].atMs`, c?.atMs);
    if (atMs < steps[steps.length - 1]!.atMs) {
      throw new SpillwayConfigError(`${option}.changes[${i}].atMs`, 'ascending times', atMs);
    }
    steps.push({
      atMs,
      ratePerSec: nonNegativeNumber(`${option}.changes[${i}].ratePerSec`, c.ratePerSec),
    });
  }
  return { process, burst, startMs, stopMs, steps };
}

/** Starts the stream: `arrive()` is called once per user, `burst` at a time. */
export function startArrivals(
  a: Arrivals,
  p: { readonly clock: SimClock; readonly random: Random; readonly arrive: () => void },
): void {
  const { clock, random, arrive } = p;
  let step = 0;
  const rateAt = (t: number): number => {
    while (step + 1 < a.steps.length && a.steps[step + 1]!.atMs <= t) step++;
    return a.steps[step]!.ratePerSec;
  };
  const schedule = (): void => {
    const t = clock.now();
    const rate = rateAt(t);
    let next: number;
    if (rate > 0) {
      const gapMs = 1000 / rate;
      next = t + (a.process === 'constant' ? gapMs : exponential(random, gapMs));
    } else next = Infinity;
    // A gap that crosses a rate change restarts at the change (memoryless for Poisson).
    const change = a.steps[step + 1]?.atMs;
    if (change !== undefined && next > change) {
      clock.setOwnTimer(change - t, schedule);
      return;
    }
    if (!(next < a.stopMs)) return;
    clock.setOwnTimer(next - t, fire);
  };
  const fire = (): void => {
    for (let i = 0; i < a.burst; i++) arrive();
    schedule();
  };
  clock.setOwnTimer(a.startMs, () => {
    if (a.startMs < a.stopMs) fire();
  });
}
