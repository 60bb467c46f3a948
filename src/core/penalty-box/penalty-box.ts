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
import { Ladder, type LadderState, type OnViolation } from './ladder.js';
import {
  ladderSettings,
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
  readonly #ladder: Ladder;
  readonly #gate: HealthGate | undefined;
  readonly #states: LruMap<LadderState>;
  readonly #maxSuspended: number;
  #suspended = 0;
  readonly #stepped = new Emitter<PenaltyStepEvent>();
  readonly onStepChange = this.#stepped.event;
  readonly #violate: OnViolation = (key, state, cause) =>
    this.#ladder.violate(key, state, { now: this.#ladder.s.clock.now(), cause });

  constructor(settings: LadderSettings, gate: HealthGate | undefined) {
    this.#gate = gate;
    this.#states = new LruMap(settings.maxKeys);
    this.#maxSuspended = settings.maxSuspended;
    this.#ladder = new Ladder(settings, gate, {
      emit: (event) => {
        if (this.#stepped.size > 0) this.#stepped.emit(event);
      },
      suspend: (key, state) => this.#pinSuspended(key, state),
    });
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
    this.#ladder.lift(key, state, this.#ladder.s.clock.now());
    return state.step;
  }

  isSuspended(key: string): boolean {
    return this.#states.peek(key)?.suspended === true;
  }

  check(key: string, cause?: unknown): PenaltyVerdict | undefined {
    const state = this.#states.get(key);
    if (state === undefined) return undefined;
    const now = this.#ladder.s.clock.now();
    return this.#ladder.check(key, state, { now, cause, onViolation: this.#violate });
  }

  refused(key: string, retryAfterMs: number): void {
    const now = this.#ladder.s.clock.now();
    this.#ladder.refused(this.#stateFor(key, now), now, retryAfterMs);
  }

  suspend(key: string): void {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    const state = this.#stateFor(key, this.#ladder.s.clock.now());
    if (state.suspended) return;
    if (!this.#pinSuspended(key, state)) {
      throw new SpillwayArgumentError(
        'key',
        `a key while fewer than maxSuspended (${this.#maxSuspended}) are suspended; lift some first`,
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

  #stateFor(key: string, now: number): LadderState {
    let state = this.#states.get(key);
    if (state === undefined) {
      state = this.#ladder.fresh(now);
      this.#states.set(key, state);
    }
    return state;
  }

  /** Marks `state` suspended and pins it; false at `maxSuspended`. */
  #pinSuspended(key: string, state: LadderState): boolean {
    if (this.#suspended >= this.#maxSuspended) return false;
    state.suspended = true;
    this.#suspended++;
    this.#states.pin(key);
    return true;
  }

  #emit(event: PenaltyStepEvent): void {
    if (this.#stepped.size > 0) this.#stepped.emit(event);
  }
}
