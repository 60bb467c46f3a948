/**
 * What every penalty box shares, in memory or in a shared store: the ladder's options and
 * their defaults (in one place), the verdicts and events, the interface the HTTP guard asks,
 * and the check that turns options into settings.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import type { Event } from '../events/emitter.js';
import {
  clockLike,
  nonNegativeInteger,
  nonNegativeNumber,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';
import type { LiftWhenOptions } from './health-gate.js';

/** One rung of the escalation ladder. */
export interface PenaltyStep {
  /** How long every request is refused once the client reaches this step, in ms. Required unless `suspend`. */
  readonly waitMs?: number;
  /** Refuse as a cool-off block (`blocked`) rather than an enforced wait (`penalty`). @default false */
  readonly block?: boolean;
  /** Close the client's connection with each refusal at this step. @default false */
  readonly closeConnection?: boolean;
  /**
   * Suspend the client until an operator lifts it (`lift(key)`), however long that is: only
   * as the last step, after at least one other. @default false
   */
  readonly suspend?: boolean;
}

/** Options of a penalty box. */
export interface PenaltyBoxOptions {
  /** Violations within `windowMs` that move a client one step up. @default 5 */
  readonly threshold?: number;
  /** The window over which violations are counted, in ms. @default 10_000 */
  readonly windowMs?: number;
  /** The ladder, first step first. @default [{ waitMs: 10_000 }, { waitMs: 60_000, block: true }] */
  readonly steps?: readonly PenaltyStep[];
  /** Quiet time after a step ends that lifts the client one step down, in ms. @default 30_000 */
  readonly liftAfterMs?: number;
  /**
   * How long after the refusal that starts a wait requests still count as sent before the
   * client read it (about a round trip), in ms: they are refused, but are not violations.
   * @default 500
   */
  readonly graceMs?: number;
  /** Most clients tracked; the least recently seen are forgotten first. @default 10_000 */
  readonly maxKeys?: number;
  /**
   * Most clients suspended at once in memory (they are never forgotten while suspended);
   * fewer than `maxKeys`. At the bound, the ladder's `suspend` step repeats the step below it
   * and `suspend(key)` throws. @default 1_000
   */
  readonly maxSuspended?: number;
  /**
   * Lift on metrics, not only the clock: blocks end, and steps lift, only while a load reading
   * you supply is healthy, and held clients come back spread out (see `LiftWhenOptions`).
   * @default undefined (timers only)
   */
  readonly liftWhen?: LiftWhenOptions;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** The verdict for a request from a client in the box. */
export interface PenaltyVerdict {
  /**
   * `penalty` for an enforced wait, `blocked` for a cool-off block, `suspended` until an
   * operator lifts it; `store-unavailable` when a shared box could not be asked and its
   * failure policy refuses.
   */
  readonly reason: 'penalty' | 'blocked' | 'suspended' | 'store-unavailable';
  /** 1-based step in force (0 for `store-unavailable`). */
  readonly step: number;
  /** Until the step ends; undefined while suspended (no end is known). */
  readonly retryAfterMs: number | undefined;
  readonly closeConnection: boolean;
}

/** Emitted when a client moves: a step up or down, suspended, or lifted. */
export interface PenaltyStepEvent {
  /** The client key (personal: publish it only where its owner agreed). */
  readonly key: string;
  /** The step now (0 = out of the box). */
  readonly step: number;
  readonly previous: number;
  /** Whether the client is suspended now. */
  readonly suspended: boolean;
  /**
   * `violations` moved it up, `quiet` time down; `operator` is `suspend` or `lift`; `shared`
   * is a move a shared box learned from its store (another replica's, or the state expiring).
   */
  readonly by: 'violations' | 'quiet' | 'operator' | 'shared';
  /** For `violations`: what was passed to `check` with the violation that moved it. */
  readonly cause?: unknown;
}

/**
 * What the HTTP guard asks of a penalty box, in memory (`penaltyBox`) or shared
 * (`redisPenaltyBox` in `spillway/redis`). `check` answers at once, on every request: a shared
 * box answers from what its replica knows, never waiting for its store.
 */
export interface PenaltyBoxLike {
  /**
   * Call for every request from `key` before its quota is checked: a verdict means refuse it
   * (the quota is not touched); undefined means carry on. `cause` (the request, say) comes
   * back on the step event of an escalation it caused.
   */
  check(key: string, cause?: unknown): PenaltyVerdict | undefined;
  /** Call when `key` was refused and told to wait `retryAfterMs`. */
  refused(key: string, retryAfterMs: number): void;
  /** Suspends `key` until {@link PenaltyBoxLike.lift}. */
  suspend(key: string): void | Promise<void>;
  /** Lets `key` out of the box altogether: no suspension, no step, no violations. */
  lift(key: string): void | Promise<void>;
  /** Subscribes to moves. */
  readonly onStepChange: Event<PenaltyStepEvent>;
  /** Stops background work (the health gate's readings). Idempotent. */
  close(): void;
}

/** A step as the boxes use it (a suspension's wait is Infinity). */
export interface LadderStep {
  readonly waitMs: number;
  readonly block: boolean;
  readonly closeConnection: boolean;
  readonly suspend: boolean;
}

/** Options checked, defaults filled in. */
export interface LadderSettings {
  readonly threshold: number;
  readonly windowMs: number;
  readonly liftAfterMs: number;
  readonly graceMs: number;
  readonly steps: readonly LadderStep[];
  readonly maxKeys: number;
  readonly maxSuspended: number;
  readonly liftWhen: LiftWhenOptions | undefined;
  readonly clock: Clock;
}

const defaultSteps: readonly PenaltyStep[] = [{ waitMs: 10_000 }, { waitMs: 60_000, block: true }];

/** Checks `options` (`name` in messages) and fills in the defaults. */
export function ladderSettings(
  name: string,
  options: PenaltyBoxOptions | undefined,
): LadderSettings {
  const o = optionsObject(name, options);
  const steps = o.steps ?? defaultSteps;
  if (!Array.isArray(steps) || steps.length === 0) {
    throw new SpillwayConfigError('steps', 'a non-empty array of { waitMs }', steps);
  }
  const checked = steps.map((s: PenaltyStep, i): LadderStep => {
    const suspend = s?.suspend === true;
    if (suspend && (i !== steps.length - 1 || i === 0)) {
      throw new SpillwayConfigError(
        `steps[${i}].suspend`,
        'only on the last step, after at least one other',
        true,
      );
    }
    return {
      waitMs: suspend ? Infinity : positiveNumber(`steps[${i}].waitMs`, s?.waitMs),
      block: suspend || s.block === true,
      closeConnection: s.closeConnection === true,
      suspend,
    };
  });
  const maxKeys = positiveInteger('maxKeys', o.maxKeys ?? 10_000);
  const maxSuspended = nonNegativeInteger(
    'maxSuspended',
    o.maxSuspended ?? Math.min(1_000, maxKeys - 1),
  );
  if (maxSuspended >= maxKeys) {
    throw new SpillwayConfigError('maxSuspended', `fewer than maxKeys (${maxKeys})`, maxSuspended);
  }
  return {
    threshold: positiveInteger('threshold', o.threshold ?? 5),
    windowMs: positiveNumber('windowMs', o.windowMs ?? 10_000),
    liftAfterMs: positiveNumber('liftAfterMs', o.liftAfterMs ?? 30_000),
    graceMs: nonNegativeNumber('graceMs', o.graceMs ?? 500),
    steps: checked,
    maxKeys,
    maxSuspended,
    liftWhen: o.liftWhen,
    clock: clockLike('clock', o.clock ?? systemClock),
  };
}

/** The verdict for `step` (1-based) of `steps`, `retryAfterMs` from now. */
export function verdictOf(
  steps: readonly LadderStep[],
  step: number,
  retryAfterMs: number | undefined,
): PenaltyVerdict {
  const s = steps[step - 1]!;
  return {
    reason: s.suspend ? 'suspended' : s.block ? 'blocked' : 'penalty',
    step,
    retryAfterMs,
    closeConnection: s.closeConnection,
  };
}
