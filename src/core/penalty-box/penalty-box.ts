/**
 * Escalation for clients that ignore the slow-down signal. A client that comes back before the
 * Retry-After it was given commits a violation; `threshold` violations within `windowMs` move
 * it one step up: an enforced, longer wait, then a cool-off block, then (optionally) its
 * connection is closed on each refusal. While a step is in force the client is refused without
 * touching its quota. After a step's wait ends, every `liftAfterMs` without a violation lifts
 * it one step down. State lives in an LRU-bounded map.
 *
 * Only a request the client sent after it could have read the refusal is a violation. Those
 * that arrive within `graceMs` of the refusal that started a wait (or of a step that started)
 * were already on their way — a page's parallel requests, calls in flight — and are refused as
 * usual without counting against the client; otherwise one burst a little over the quota would
 * read as ignoring Retry-After, and a polite client would be blocked for what it did before it
 * was told.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import { LruMap } from '../internal/lru-map.js';
import {
  clockLike,
  nonNegativeNumber,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';

/** One rung of the escalation ladder. */
export interface PenaltyStep {
  /** How long every request is refused once the client reaches this step, in ms. */
  readonly waitMs: number;
  /** Refuse as a cool-off block (`blocked`) rather than an enforced wait (`penalty`). @default false */
  readonly block?: boolean;
  /** Close the client's connection with each refusal at this step. @default false */
  readonly closeConnection?: boolean;
}

/** Options of {@link penaltyBox}. */
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
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** The verdict for a request from a client in the box. */
export interface PenaltyVerdict {
  /** `penalty` for an enforced wait, `blocked` for a cool-off block. */
  readonly reason: 'penalty' | 'blocked';
  /** 1-based step in force. */
  readonly step: number;
  /** Until the step ends. */
  readonly retryAfterMs: number;
  readonly closeConnection: boolean;
}

/** Emitted when a client moves a step, up (a violation) or down (quiet time). */
export interface PenaltyStepEvent {
  /** The client key (personal: publish it only where its owner agreed). */
  readonly key: string;
  /** The step now (0 = out of the box). */
  readonly step: number;
  readonly previous: number;
}

/** Escalating refusals for clients that ignore Retry-After. */
export interface PenaltyBox {
  /**
   * Call for every request from `key` before its quota is checked: a verdict means refuse it
   * (the quota is not touched); undefined means carry on.
   */
  check(key: string): PenaltyVerdict | undefined;
  /** Call when `key` was refused and told to wait `retryAfterMs`. */
  refused(key: string, retryAfterMs: number): void;
  /** The step `key` is on now (0 = none). */
  stepOf(key: string): number;
  /** Clients tracked now. */
  readonly size: number;
  /** Subscribes to step changes. */
  readonly onStepChange: Event<PenaltyStepEvent>;
}

interface ClientState {
  /** Returning before this time is a violation. */
  retryAt: number;
  /** The last `threshold` violation times, as a ring. */
  readonly violations: number[];
  next: number;
  step: number;
  /** The current step's wait ends here. */
  until: number;
  /** When lifting was last accounted (quiet time is measured from here). */
  quietSince: number;
  /** Requests arriving before this were sent before the client could read its refusal. */
  graceUntil: number;
}

/**
 * Creates a penalty box.
 *
 * @example
 * const box = penaltyBox({ threshold: 5, windowMs: 10_000 });
 * const verdict = box.check(clientKey);
 * if (verdict) return refuse429(verdict.retryAfterMs);
 */
export function penaltyBox(options?: PenaltyBoxOptions): PenaltyBox {
  const o = optionsObject('penaltyBox options', options);
  const steps = o.steps ?? [{ waitMs: 10_000 }, { waitMs: 60_000, block: true }];
  if (!Array.isArray(steps) || steps.length === 0) {
    throw new SpillwayConfigError('steps', 'a non-empty array of { waitMs }', steps);
  }
  const checked = steps.map((s: PenaltyStep, i) => ({
    waitMs: positiveNumber(`steps[${i}].waitMs`, s?.waitMs),
    block: s.block === true,
    closeConnection: s.closeConnection === true,
  }));
  return new Box({
    threshold: positiveInteger('threshold', o.threshold ?? 5),
    windowMs: positiveNumber('windowMs', o.windowMs ?? 10_000),
    liftAfterMs: positiveNumber('liftAfterMs', o.liftAfterMs ?? 30_000),
    graceMs: nonNegativeNumber('graceMs', o.graceMs ?? 500),
    steps: checked,
    states: new LruMap<ClientState>(positiveInteger('maxKeys', o.maxKeys ?? 10_000)),
    clock: clockLike('clock', o.clock ?? systemClock),
  });
}

interface Settings {
  readonly threshold: number;
  readonly windowMs: number;
  readonly liftAfterMs: number;
  readonly graceMs: number;
  readonly steps: readonly Required<PenaltyStep>[];
  readonly states: LruMap<ClientState>;
  readonly clock: Clock;
}

class Box implements PenaltyBox {
  readonly #s: Settings;
  readonly #stepped = new Emitter<PenaltyStepEvent>();
  readonly onStepChange = this.#stepped.event;

  constructor(settings: Settings) {
    this.#s = settings;
  }

  get size(): number {
    return this.#s.states.size;
  }

  stepOf(key: string): number {
    const state = this.#s.states.peek(key);
    if (state === undefined) return 0;
    this.#lift(key, state, this.#s.clock.now());
    return state.step;
  }

  check(key: string): PenaltyVerdict | undefined {
    const state = this.#s.states.get(key);
    if (state === undefined) return undefined;
    const now = this.#s.clock.now();
    const sentAfterReading = now >= state.graceUntil;
    if (state.step > 0 && now < state.until) {
      // Still coming during an enforced wait: a violation, which may escalate further.
      if (sentAfterReading) this.#violate(key, state, now);
      return this.#verdict(state, now);
    }
    this.#lift(key, state, now);
    if (now < state.retryAt && sentAfterReading && this.#violate(key, state, now)) {
      return this.#verdict(state, now);
    }
    return undefined;
  }

  refused(key: string, retryAfterMs: number): void {
    const now = this.#s.clock.now();
    let state = this.#s.states.get(key);
    if (state === undefined) {
      state = {
        retryAt: 0,
        violations: [],
        next: 0,
        step: 0,
        until: 0,
        quietSince: now,
        graceUntil: 0,
      };
      this.#s.states.set(key, state);
    }
    // A refusal that starts a wait: what arrives within the grace was already on its way.
    if (now >= state.retryAt) state.graceUntil = now + this.#s.graceMs;
    const retryAt = now + (retryAfterMs > 0 ? retryAfterMs : 0);
    if (retryAt > state.retryAt) state.retryAt = retryAt;
  }

  /** Records a violation; true if it moved the client a step up. */
  #violate(key: string, state: ClientState, now: number): boolean {
    const { threshold, windowMs, steps } = this.#s;
    const ring = state.violations;
    if (ring.length < threshold) ring.push(now);
    else ring[state.next] = now;
    state.next = (state.next + 1) % threshold;
    state.quietSince = now;
    if (ring.length < threshold) return false;
    const oldest = ring[state.next % ring.length]!;
    if (now - oldest > windowMs) return false;
    if (state.step < steps.length) {
      state.step++;
      if (this.#stepped.size > 0) {
        this.#stepped.emit({ key, step: state.step, previous: state.step - 1 });
      }
    }
    state.until = now + steps[state.step - 1]!.waitMs;
    state.retryAt = state.until;
    state.graceUntil = now + this.#s.graceMs;
    ring.length = 0;
    state.next = 0;
    return true;
  }

  /** Lifts one step per `liftAfterMs` of quiet time after the current step's wait ended. */
  #lift(key: string, state: ClientState, now: number): void {
    if (state.step === 0 || now < state.until) return;
    const from = Math.max(state.until, state.quietSince);
    const steps = Math.floor((now - from) / this.#s.liftAfterMs);
    if (steps <= 0) return;
    const previous = state.step;
    state.step = Math.max(0, state.step - steps);
    state.quietSince = from + steps * this.#s.liftAfterMs;
    if (this.#stepped.size > 0) this.#stepped.emit({ key, step: state.step, previous });
  }

  #verdict(state: ClientState, now: number): PenaltyVerdict {
    const step = this.#s.steps[state.step - 1]!;
    return {
      reason: step.block ? 'blocked' : 'penalty',
      step: state.step,
      retryAfterMs: Math.max(1, Math.ceil(state.until - now)),
      closeConnection: step.closeConnection,
    };
  }
}
