/**
 * The ladder's rules over one client's state, whoever keeps the state: what a request is
 * (a violation or not, refused or not), how violations move a client up, how quiet time lifts
 * it down, and what a block held by the health gate says. The memory box keeps states in an
 * LRU map; a shared box keeps its replica's view of them and sends violations to its store.
 *
 * @module
 */
import type { HealthGate } from './health-gate.js';
import {
  verdictOf,
  type LadderSettings,
  type PenaltyStepEvent,
  type PenaltyVerdict,
} from './penalty-options.js';

/** One client's place on the ladder. */
export interface LadderState {
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
  /** Refused until an operator lifts it. */
  suspended: boolean;
}

/**
 * What a violation does: the memory box escalates at once ({@link Ladder.violate}); a shared
 * box records it for its store. True when it moved the client up now.
 */
export type OnViolation = (key: string, state: LadderState, cause: unknown) => boolean;

/** What the ladder needs of its box. */
export interface LadderHost {
  /** Tells the box's listeners (only called when there may be some). */
  emit(event: PenaltyStepEvent): void;
  /** Marks `state` suspended if the box can hold one more; false if it cannot. */
  suspend(key: string, state: LadderState): boolean;
}

/** The ladder's rules, over states a box keeps. */
export class Ladder {
  readonly s: LadderSettings;
  readonly #gate: HealthGate | undefined;
  readonly #host: LadderHost;

  constructor(settings: LadderSettings, gate: HealthGate | undefined, host: LadderHost) {
    this.s = settings;
    this.#gate = gate;
    this.#host = host;
  }

  /** A client's state when first refused. */
  fresh(now: number): LadderState {
    return {
      retryAt: 0,
      violations: [],
      next: 0,
      step: 0,
      until: 0,
      quietSince: now,
      graceUntil: 0,
      suspended: false,
    };
  }

  /** The verdict for a request from a client in `state`; undefined lets it through. */
  check(
    key: string,
    state: LadderState,
    at: { readonly now: number; readonly cause: unknown; readonly onViolation: OnViolation },
  ): PenaltyVerdict | undefined {
    if (state.suspended) return this.suspendedVerdict(state);
    const { now, cause, onViolation } = at;
    const sentAfterReading = now >= state.graceUntil;
    if (state.step > 0 && now < state.until) {
      // Still coming during an enforced wait: a violation, which may escalate further.
      if (sentAfterReading) onViolation(key, state, cause);
      return this.verdict(state, now);
    }
    const held = this.#heldMs(key, state, now);
    if (held > 0) {
      // A block outlasting its wait while the service is not healthy: told when to come back,
      // and coming back sooner is a violation as in any block.
      if (sentAfterReading && now < state.retryAt && onViolation(key, state, cause)) {
        return this.verdict(state, now);
      }
      if (now + held > state.retryAt) state.retryAt = now + held;
      return verdictOf(this.s.steps, state.step, Math.ceil(held));
    }
    this.lift(key, state, now);
    if (now < state.retryAt && sentAfterReading && onViolation(key, state, cause)) {
      return this.verdict(state, now);
    }
    return undefined;
  }

  /** `state`'s client was refused and told to wait `retryAfterMs`. */
  refused(state: LadderState, now: number, retryAfterMs: number): void {
    // A refusal that starts a wait: what arrives within the grace was already on its way.
    if (now >= state.retryAt) state.graceUntil = now + this.s.graceMs;
    const retryAt = now + (retryAfterMs > 0 ? retryAfterMs : 0);
    if (retryAt > state.retryAt) state.retryAt = retryAt;
  }

  /** Records a violation here and escalates on the threshold; true if it moved the client up. */
  violate(
    key: string,
    state: LadderState,
    at: { readonly now: number; readonly cause: unknown },
  ): boolean {
    const { threshold, windowMs } = this.s;
    const now = at.now;
    const ring = state.violations;
    if (ring.length < threshold) ring.push(now);
    else ring[state.next] = now;
    state.next = (state.next + 1) % threshold;
    state.quietSince = now;
    if (ring.length < threshold) return false;
    const oldest = ring[state.next % ring.length]!;
    if (now - oldest > windowMs) return false;
    this.escalate(key, state, at);
    return true;
  }

  /** Moves `state` one step up now (at the top: its step again), emptying the ring. */
  escalate(
    key: string,
    state: LadderState,
    at: { readonly now: number; readonly cause: unknown },
  ): void {
    const steps = this.s.steps;
    const now = at.now;
    const previous = state.step;
    if (state.step < steps.length) state.step++;
    // The last step suspends, unless the box holds as many as it may: then the step below it.
    if (steps[state.step - 1]!.suspend && !this.#host.suspend(key, state)) state.step--;
    this.enter(state, now);
    state.violations.length = 0;
    state.next = 0;
    if (state.step !== previous || state.suspended) {
      const { suspended, step } = state;
      this.#host.emit({ key, step, previous, suspended, by: 'violations', cause: at.cause });
    }
  }

  /** Starts `state`'s step now: its wait, and the grace for requests already on their way. */
  enter(state: LadderState, now: number): void {
    state.until = now + this.s.steps[state.step - 1]!.waitMs;
    state.retryAt = state.until;
    state.graceUntil = now + this.s.graceMs;
    state.quietSince = now;
  }

  /**
   * Lifts one step per `liftAfterMs` of quiet time after the current step's wait ended —
   * with a health gate, quiet time counts only while healthy, from when it last turned so.
   */
  lift(key: string, state: LadderState, now: number): void {
    if (state.step === 0 || state.suspended || now < state.until) return;
    let from = Math.max(state.until, state.quietSince);
    const gate = this.#gate;
    if (gate !== undefined) {
      const since = gate.healthySince;
      if (since === undefined) return;
      if (since > from) from = since;
    }
    const steps = Math.floor((now - from) / this.s.liftAfterMs);
    if (steps <= 0) return;
    const previous = state.step;
    state.step = Math.max(0, state.step - steps);
    state.quietSince = from + steps * this.s.liftAfterMs;
    this.#host.emit({ key, step: state.step, previous, suspended: false, by: 'quiet' });
  }

  /** Ms of healthy quiet time that counts for lifting now: -1 while unhealthy. */
  healthyForMs(now: number): number {
    const since = this.#gate?.healthySince;
    if (this.#gate === undefined) return Number.MAX_SAFE_INTEGER;
    return since === undefined ? -1 : Math.max(0, Math.floor(now - since));
  }

  verdict(state: LadderState, now: number): PenaltyVerdict {
    if (state.suspended) return this.suspendedVerdict(state);
    return verdictOf(this.s.steps, state.step, Math.max(1, Math.ceil(state.until - now)));
  }

  suspendedVerdict(state: LadderState): PenaltyVerdict {
    const step = this.s.steps[state.step - 1];
    return {
      reason: 'suspended',
      step: state.step,
      retryAfterMs: undefined,
      closeConnection: step?.closeConnection === true,
    };
  }

  /** Ms a block that has run its wait is still held by the health gate (0: not held). */
  #heldMs(key: string, state: LadderState, now: number): number {
    const gate = this.#gate;
    if (gate === undefined || state.step === 0 || !this.s.steps[state.step - 1]!.block) return 0;
    return gate.releaseWaitMs(key, now);
  }
}
