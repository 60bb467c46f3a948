/**
 * `redisPenaltyBox`: the penalty box shared by every replica, so a client that ignores 429s is
 * escalated everywhere, not only on the replica it happened to hammer. The ladder's rules are
 * the memory box's; where its state lives is what changes:
 *
 * - **Answers stay local.** `check` answers from this replica's view at once, never waiting
 *   for Redis: the abusive client's refusal costs what it costs in memory.
 * - **Violations go to Redis**, one script call per batch: a key's violations seen while its
 *   call is out go in the next, so a flood makes one call at a time per key. The script counts
 *   them with every other replica's, moves the client up, and writes the change to a feed.
 * - **Every replica reads the feed** every `syncMs` (and at start, everything): steps,
 *   suspensions and lifts made anywhere reach its view within about `syncMs`.
 * - **Redis down**, by the store's failure policy: `open` keeps the views as last read and
 *   drops violations; `local` escalates on this replica's own violations; `closed` refuses
 *   every request (503, "retry elsewhere") while the feed cannot be read. Same deadline,
 *   in-flight cap and breaker as the store's decisions. `suspend` and `lift` reject with
 *   `StoreUnavailableError`: an operator's change that did not happen never reads as done.
 *
 * @module
 */
import { SpillwayArgumentError } from '../core/errors/argument-error.js';
import { Emitter } from '../core/events/emitter.js';
import { HealthGate } from '../core/penalty-box/health-gate.js';
import { Ladder, type LadderState, type OnViolation } from '../core/penalty-box/ladder.js';
import type {
  PenaltyBoxLike,
  PenaltyStepEvent,
  PenaltyVerdict,
} from '../core/penalty-box/penalty-options.js';
import { BoundedMap } from './bounded-map.js';
import { isFailure, type CallFailure } from './call-gate.js';
import { FeedReader, type FeedChange } from './penalty-feed.js';
import {
  penaltyLiftScript,
  penaltySuspendScript,
  penaltyViolateScript,
} from './penalty-scripts.js';
import {
  boxSettings,
  type BoxSettings,
  type RedisPenaltyBoxOptions,
} from './redis-penalty-box-options.js';
import { StoreUnavailableError } from './store-unavailable-error.js';

/** A penalty box shared through Redis. */
export interface RedisPenaltyBox extends PenaltyBoxLike {
  /** Answers from this replica's view, at once. */
  check(key: string, cause?: unknown): PenaltyVerdict | undefined;
  /** Suspends `key` on every replica until lifted (or `suspendTtlMs`). */
  suspend(key: string): Promise<void>;
  /** Lets `key` out on every replica: no suspension, no step, no violations. */
  lift(key: string): Promise<void>;
  /**
   * Reads the box's changes now (it does every `syncMs` anyway); resolves true once read,
   * false if Redis could not be asked.
   */
  sync(): Promise<boolean>;
  /** Clients in this replica's view. */
  readonly size: number;
}

/** This replica's view of one client: the ladder's state, and violations not yet sent. */
interface View extends LadderState {
  pending: number;
  cause: unknown;
  sending: boolean;
}

const unavailable: PenaltyVerdict = Object.freeze({
  reason: 'store-unavailable',
  step: 0,
  retryAfterMs: undefined,
  closeConnection: false,
});

/**
 * Creates a penalty box shared through a Redis store. Pass it to the guard as `penaltyBox`;
 * the guard does not close a box you made: call `close()` when done.
 *
 * @example
 * const store = redisStore({ client: new Redis() });
 * const guard = admission({ penaltyBox: redisPenaltyBox({ store, threshold: 5 }) });
 */
export function redisPenaltyBox(options: RedisPenaltyBoxOptions): RedisPenaltyBox {
  return new SharedBox(boxSettings(options));
}

class SharedBox implements RedisPenaltyBox {
  readonly #s: BoxSettings;
  readonly #ladder: Ladder;
  readonly #health: HealthGate | undefined;
  /** This replica's views; the least recently used leaves first when full. */
  readonly #views: BoundedMap<View>;
  /** Suspended clients' views, kept apart so none is forgotten (at most `maxSuspended`). */
  readonly #pinned = new Map<string, View>();
  readonly #stepped = new Emitter<PenaltyStepEvent>();
  readonly onStepChange = this.#stepped.event;
  readonly #feed: FeedReader;
  #closed = false;
  readonly #violation: OnViolation = (key, state, cause) => {
    const view = state as View;
    view.pending++;
    view.cause = cause;
    view.quietSince = this.#s.clock.now();
    if (!view.sending) void this.#send(key, view);
    return false;
  };

  constructor(s: BoxSettings) {
    this.#s = s;
    this.#views = new BoundedMap(s.maxKeys);
    this.#health = s.liftWhen === undefined ? undefined : new HealthGate(s.liftWhen, s.clock);
    this.#ladder = new Ladder(s, this.#health, {
      emit: (event) => this.#emit(event),
      suspend: (key, state) => {
        this.#mark(key, state as View, true);
        return true;
      },
    });
    this.#feed = new FeedReader(s, {
      apply: (now, change) => this.#apply(now, change),
      forget: () => this.#forgetShared(),
    });
  }

  get size(): number {
    return this.#views.size + this.#pinned.size;
  }

  check(key: string, cause?: unknown): PenaltyVerdict | undefined {
    if (this.#s.store.policy === 'closed' && this.#down()) return unavailable;
    const view = this.#view(key);
    if (view === undefined) return undefined;
    const now = this.#s.clock.now();
    return this.#ladder.check(key, view, { now, cause, onViolation: this.#violation });
  }

  refused(key: string, retryAfterMs: number): void {
    const now = this.#s.clock.now();
    this.#ladder.refused(this.#viewFor(key, now), now, retryAfterMs);
  }

  async suspend(key: string): Promise<void> {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    const s = this.#s;
    this.#reply(await s.store.gate.call(penaltySuspendScript, this.#ask(key, s.suspendTtlMs)));
    const view = this.#viewFor(key, s.clock.now());
    if (view.suspended) return;
    this.#mark(key, view, true);
    this.#emit({ key, step: view.step, previous: view.step, suspended: true, by: 'operator' });
  }

  async lift(key: string): Promise<void> {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    this.#reply(await this.#s.store.gate.call(penaltyLiftScript, this.#ask(key)));
    this.#clear(key, 'operator');
  }

  sync(): Promise<boolean> {
    return this.#feed.sync();
  }

  close(): void {
    this.#closed = true;
    this.#feed.close();
    this.#health?.close();
  }

  /** True while the box cannot read Redis: the feed failed last, or the breaker is open. */
  #down(): boolean {
    return this.#feed.down || this.#s.store.gate.breakerState === 'open';
  }

  /** Sends `view`'s violations, a batch per call, until none are left. */
  async #send(key: string, view: View): Promise<void> {
    const s = this.#s;
    view.sending = true;
    try {
      while (view.pending > 0 && !this.#closed) {
        const n = view.pending;
        const cause = view.cause;
        view.pending = 0;
        view.cause = undefined;
        const healthyFor = this.#ladder.healthyForMs(s.clock.now());
        const r = await s.store.gate.call(penaltyViolateScript, {
          keys: s.keys,
          args: [
            key,
            n,
            s.threshold,
            s.windowMs,
            s.liftAfterMs,
            healthyFor,
            s.keepMs,
            s.suspendTtlMs,
            s.tombMs,
            s.waits,
          ],
        });
        s.store.note(r);
        if (!isFailure(r)) this.#violated(key, view, { r, cause });
        else if (s.store.policy === 'local') {
          // Redis is away: this replica escalates on what it sees itself.
          const now = s.clock.now();
          for (let i = 0; i < n; i++) if (this.#ladder.violate(key, view, { now, cause })) break;
        }
      }
    } finally {
      view.sending = false;
    }
  }

  /** Takes in the violation script's reply: a move up starts its step here at once. */
  #violated(key: string, view: View, at: { readonly r: number[]; readonly cause: unknown }): void {
    const [step = 0, leftMs = 0, suspended = 0, moved = 0] = at.r;
    const previous = view.step;
    const wasSuspended = view.suspended;
    view.step = step;
    this.#mark(key, view, suspended === 1);
    const now = this.#s.clock.now();
    if (moved === 1) {
      this.#ladder.enter(view, now);
      view.violations.length = 0;
    }
    if (!view.suspended) {
      // Redis's word on the step's end, whoever started it (another replica, since its read).
      view.until = now + leftMs;
      if (moved === 1 || view.retryAt < view.until) view.retryAt = view.until;
    }
    if (step === previous && view.suspended === wasSuspended) return;
    const by = moved === 1 ? 'violations' : 'shared';
    this.#emit({ key, step, previous, suspended: view.suspended, by, cause: at.cause });
  }

  /** One change read from the feed. */
  #apply(now: number, change: FeedChange): void {
    const [key, , step, leftMs, quietMs, suspended] = change;
    if (step === -1) {
      this.#clear(key, 'shared');
      return;
    }
    const view = this.#viewFor(key, now);
    const previous = view.step;
    const wasSuspended = view.suspended;
    view.step = step;
    view.until = now + leftMs;
    if (view.retryAt < view.until) view.retryAt = view.until;
    view.quietSince = now - quietMs;
    this.#mark(key, view, suspended === 1);
    if (step !== previous || view.suspended !== wasSuspended) {
      this.#emit({ key, step, previous, suspended: view.suspended, by: 'shared' });
    }
  }

  /**
   * Out of the box here: no step, no suspension, nothing it was told to wait for (a lift
   * forgives; a state that expired ended long after its waits).
   */
  #clear(key: string, by: 'operator' | 'shared'): void {
    const view = this.#view(key);
    if (view === undefined) return;
    const { step: previous, suspended } = view;
    view.step = 0;
    view.until = 0;
    view.retryAt = 0;
    view.graceUntil = 0;
    view.pending = 0;
    view.violations.length = 0;
    this.#mark(key, view, false);
    if (previous > 0 || suspended) this.#emit({ key, step: 0, previous, suspended: false, by });
  }

  /** Drops what every view learned from Redis (before reading the whole box again). */
  #forgetShared(): void {
    for (const key of [...this.#pinned.keys(), ...this.#views.keys()]) {
      const view = this.#view(key);
      if (view === undefined) continue;
      view.step = 0;
      view.until = 0;
      this.#mark(key, view, false);
    }
  }

  #view(key: string): View | undefined {
    return this.#pinned.size > 0
      ? (this.#pinned.get(key) ?? this.#views.use(key))
      : this.#views.use(key);
  }

  #viewFor(key: string, now: number): View {
    let view = this.#view(key);
    if (view === undefined) {
      view = { ...this.#ladder.fresh(now), pending: 0, cause: undefined, sending: false };
      this.#views.set(key, view);
    }
    return view;
  }

  /** Sets `view` suspended or not; suspended views are kept apart while there is room. */
  #mark(key: string, view: View, suspended: boolean): void {
    view.suspended = suspended;
    if (suspended && !this.#pinned.has(key) && this.#pinned.size < this.#s.maxSuspended) {
      this.#views.delete(key);
      this.#pinned.set(key, view);
    } else if (!suspended && this.#pinned.delete(key)) this.#views.set(key, view);
  }

  #ask(key: string, ...more: number[]) {
    return { keys: this.#s.keys, args: [key, ...more, this.#s.tombMs] };
  }

  #reply(r: number[] | CallFailure): number[] {
    this.#s.store.note(r);
    if (isFailure(r)) throw new StoreUnavailableError({ cause: r.error ?? r.failed });
    return r;
  }

  #emit(event: PenaltyStepEvent): void {
    if (this.#stepped.size > 0) this.#stepped.emit(event);
  }
}
