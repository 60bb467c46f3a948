/**
 * Escalation for clients that ignore the slow-down signal. A client that comes back before the
 * Retry-After it was given commits a violation; `threshold` violations within `windowMs` move
 * it one step up: an enforced, longer wait, then a cool-off block, then (optionally) its
 * connection is closed on each refusal, and (optionally) last, a suspension that lasts until
 * an operator lifts it. While a step is in force the client is refused without touching its
 * quota. After a step's wait ends, every `liftAfterMs` without a violation lifts it one step
 * down; with `liftWhen`, blocks end and steps lift only while the service reads healthy (see
 * `health-gate.ts`). State lives in an LRU-bounded map; suspended clients are pinned in it.
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
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { Emitter } from '../events/emitter.js';
import { LruMap } from '../internal/lru-map.js';
import { HealthGate } from './health-gate.js';
import {
  ladderSettings,
  verdictOf,
  type LadderSettings,
  type PenaltyBoxLike,
  type PenaltyBoxOptions,
  type PenaltyStepEvent,
  type PenaltyVerdict,
} from './penalty-options.js';

export type {
  PenaltyBoxLike,
  PenaltyBoxOptions,
  PenaltyStep,
  PenaltyStepEvent,
  PenaltyVerdict,
} from './penalty-options.js';
export type { LiftWhenOptions } from './health-gate.js';

/** Escalating refusals for clients that ignore Retry-After, in this process's memory. */
export interface PenaltyBox extends PenaltyBoxLike {
  check(key: string, cause?: unknown): PenaltyVerdict | undefined;
  /** Suspends `key` until {@link PenaltyBox.lift}; throws at `maxSuspended`. */
  suspend(key: string): void;
  lift(key: string): void;
  /** The step `key` is on now (0 = none). */
  stepOf(key: string): number;
  /** Whether `key` is suspended. */
  isSuspended(key: string): boolean;
  /** Clients tracked now. */
  readonly size: number;
  /** Clients suspended now. */
  readonly suspended: number;
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
  /** Refused until an operator lifts it. */
  suspended: boolean;
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
  const s = ladderSettings('penaltyBox options', options);
  const gate = s.liftWhen === undefined ? undefined : new HealthGate(s.liftWhen, s.clock);
  return new Box(s, gate);
}

class Box implements PenaltyBox {
  readonly #s: LadderSettings;
  readonly #gate: HealthGate | undefined;
  readonly #states: LruMap<ClientState>;
  #suspended = 0;
  readonly #stepped = new Emitter<PenaltyStepEvent>();
  readonly onStepChange = this.#stepped.event;

  constructor(settings: LadderSettings, gate: HealthGate | undefined) {
    this.#s = settings;
    this.#gate = gate;
    this.#states = new LruMap(settings.maxKeys);
  }

  get size(): number {
    return this.#states.size;
  }

  get suspended(): number {
    return this.#suspended;
  }

  stepOf(key: string): number {
    const state = this.#states.peek(key);
    if (state === undefined) return 0;
    this.#lift(key, state, this.#s.clock.now());
    return state.step;
  }

  isSuspended(key: string): boolean {
    return this.#states.peek(key)?.suspended === true;
  }

  check(key: string, cause?: unknown): PenaltyVerdict | undefined {
    const state = this.#states.get(key);
    if (state === undefined) return undefined;
    if (state.suspended) return this.#suspendedVerdict(state);
    const now = this.#s.clock.now();
    const sentAfterReading = now >= state.graceUntil;
    if (state.step > 0 && now < state.until) {
      // Still coming during an enforced wait: a violation, which may escalate further.
      if (sentAfterReading) this.#violate(key, state, { now, cause });
      return state.suspended ? this.#suspendedVerdict(state) : this.#verdict(state, now);
    }
    const held = this.#heldMs(key, state, now);
    if (held > 0) {
      // A block outlasting its wait while the service is not healthy: told when to come back,
      // and coming back sooner is a violation as in any block.
      if (sentAfterReading && now < state.retryAt && this.#violate(key, state, { now, cause })) {
        return state.suspended ? this.#suspendedVerdict(state) : this.#verdict(state, now);
      }
      if (now + held > state.retryAt) state.retryAt = now + held;
      return verdictOf(this.#s.steps, state.step, Math.ceil(held));
    }
    this.#lift(key, state, now);
    if (now < state.retryAt && sentAfterReading && this.#violate(key, state, { now, cause })) {
      return state.suspended ? this.#suspendedVerdict(state) : this.#verdict(state, now);
    }
    return undefined;
  }

  refused(key: string, retryAfterMs: number): void {
    const now = this.#s.clock.now();
    const state = this.#stateFor(key, now);
    // A refusal that starts a wait: what arrives within the grace was already on its way.
    if (now >= state.retryAt) state.graceUntil = now + this.#s.graceMs;
    const retryAt = now + (retryAfterMs > 0 ? retryAfterMs : 0);
    if (retryAt > state.retryAt) state.retryAt = retryAt;
  }

  suspend(key: string): void {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    const state = this.#stateFor(key, this.#s.clock.now());
    if (state.suspended) return;
    if (!this.#pinSuspended(key, state)) {
      throw new SpillwayArgumentError(
        'key',
        `a key while fewer than maxSuspended (${this.#s.maxSuspended}) are suspended; lift some first`,
        key,
      );
    }
    this.#emit({ key, step: state.step, previous: state.step, suspended: true, by: 'operator' });
  }

  lift(key: string): void {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    const state = this.#states.peek(key);
    if (state === undefined) return;
    if (state.suspended) this.#suspended--;
    this.#states.delete(key);
    if (state.step > 0 || state.suspended) {
      this.#emit({ key, step: 0, previous: state.step, suspended: false, by: 'operator' });
    }
  }

  close(): void {
    this.#gate?.close();
  }

  #stateFor(key: string, now: number): ClientState {
    let state = this.#states.get(key);
    if (state === undefined) {
      state = {
        retryAt: 0,
        violations: [],
        next: 0,
        step: 0,
        until: 0,
        quietSince: now,
        graceUntil: 0,
        suspended: false,
      };
      this.#states.set(key, state);
    }
    return state;
  }

  /** Marks `state` suspended and pins it; false at `maxSuspended`. */
  #pinSuspended(key: string, state: ClientState): boolean {
    if (this.#suspended >= this.#s.maxSuspended) return false;
    state.suspended = true;
    this.#suspended++;
    this.#states.pin(key);
    return true;
  }

  /** Records a violation; true if it moved the client a step up. */
  #violate(
    key: string,
    state: ClientState,
    at: { readonly now: number; readonly cause: unknown },
  ): boolean {
    const { threshold, windowMs, steps } = this.#s;
    const now = at.now;
    const ring = state.violations;
    if (ring.length < threshold) ring.push(now);
    else ring[state.next] = now;
    state.next = (state.next + 1) % threshold;
    state.quietSince = now;
    if (ring.length < threshold) return false;
    const oldest = ring[state.next % ring.length]!;
    if (now - oldest > windowMs) return false;
    const previous = state.step;
    if (state.step < steps.length) state.step++;
    // The last step suspends, unless as many are suspended as memory may hold: then the step
    // below it again.
    if (steps[state.step - 1]!.suspend && !this.#pinSuspended(key, state)) state.step--;
    state.until = now + steps[state.step - 1]!.waitMs;
    state.retryAt = state.until;
    state.graceUntil = now + this.#s.graceMs;
    ring.length = 0;
    state.next = 0;
    if (state.step !== previous || state.suspended) {
      this.#emit({
        key,
        step: state.step,
        previous,
        suspended: state.suspended,
        by: 'violations',
        cause: at.cause,
      });
    }
    return true;
  }

  /** Ms a block that has run its wait is still held by the health gate (0: not held). */
  #heldMs(key: string, state: ClientState, now: number): number {
    const gate = this.#gate;
    if (gate === undefined || state.step === 0 || !this.#s.steps[state.step - 1]!.block) return 0;
    return gate.releaseWaitMs(key, now);
  }

  /**
   * Lifts one step per `liftAfterMs` of quiet time after the current step's wait ended —
   * with a health gate, quiet time counts only while healthy, from when it last turned so.
   */
  #lift(key: string, state: ClientState, now: number): void {
    if (state.step === 0 || state.suspended || now < state.until) return;
    let from = Math.max(state.until, state.quietSince);
    const gate = this.#gate;
    if (gate !== undefined) {
      const since = gate.healthySince;
      if (since === undefined) return;
      if (since > from) from = since;
    }
    const steps = Math.floor((now - from) / this.#s.liftAfterMs);
    if (steps <= 0) return;
    const previous = state.step;
    state.step = Math.max(0, state.step - steps);
    state.quietSince = from + steps * this.#s.liftAfterMs;
    this.#emit({ key, step: state.step, previous, suspended: false, by: 'quiet' });
  }

  #emit(event: PenaltyStepEvent): void {
    if (this.#stepped.size > 0) this.#stepped.emit(event);
  }

  #verdict(state: ClientState, now: number): PenaltyVerdict {
    return verdictOf(this.#s.steps, state.step, Math.max(1, Math.ceil(state.until - now)));
  }

  #suspendedVerdict(state: ClientState): PenaltyVerdict {
    const step = this.#s.steps[state.step - 1];
    return {
      reason: 'suspended',
      step: state.step,
      retryAfterMs: undefined,
      closeConnection: step?.closeConnection === true,
    };
  }
}
