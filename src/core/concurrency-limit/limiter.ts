/**
 * The concurrency limit's machinery: slots held, the line of waiters (by criticality, FIFO or
 * LIFO, with CoDel in `adaptive` order), the handing of a released slot straight to the next
 * waiter, the wait estimate that refuses at the door a deadline too short to wait, and the
 * events. Built by `concurrencyLimit()` from settled options.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import {
  checkedCriticalityRank,
  criticalities,
  criticalityRank,
  type Criticality,
} from '../criticality/criticality.js';
import type { RejectionReason } from '../errors/rejected-error.js';
import { Emitter } from '../events/emitter.js';
import type { LimitSource } from './limit-source.js';
import type { Partitions } from './partitions.js';
import { SlotPermit, type PermitOutcome, type PermitOwner } from './permit.js';
import {
  frozenRejections,
  QueuedAcquire,
  settledPlace,
  type WaiterOwner,
} from './queued-acquire.js';
import { feed, runAnswered, runHolding, runSignal } from './run-holding.js';
import type {
  AcquireEvent,
  AcquireOptions,
  AcquireResult,
  LinePlace,
  OwnedConcurrencyLimit,
  QueueOrder,
  RejectEvent,
  ReleaseEvent,
  Work,
} from './types.js';
import { WaiterLine, rankCount } from './waiter-line.js';

/** A limit's options, checked and settled (see `ownedConcurrencyLimit`). */
export interface Settings {
  readonly fixed: number;
  readonly source: LimitSource | undefined;
  /** The source again when it learns from samples, so the hot path tests one field. */
  readonly sampler: LimitSource | undefined;
  readonly partitions: Partitions | undefined;
  readonly maxQueue: number;
  readonly maxQueueWaitMs: number;
  readonly order: QueueOrder;
  readonly codelTargetMs: number;
  readonly codelIntervalMs: number;
  readonly clock: Clock;
}

/** The limit itself: slots, the line, and what moves between them. */
export class Limiter implements OwnedConcurrencyLimit, PermitOwner, WaiterOwner {
  readonly #s: Settings;
  readonly #clock: Clock;
  readonly #line = new WaiterLine();
  #active = 0;
  // Measured spacing of grants while a line stands: the basis of wait estimates. Forgotten
  // once a slot goes free with nobody waiting (see `#freed`).
  #gapMs: number | undefined;
  #lastGrantAt = -Infinity;
  #busySince = 0;
  // CoDel state (`adaptive` order).
  #intervalEndsAt = 0;
  #minDelayMs = 0;
  #overloaded = false;
  readonly #acquired = new Emitter<AcquireEvent>();
  readonly #rejected = new Emitter<RejectEvent>();
  readonly #released = new Emitter<ReleaseEvent>();
  readonly onAcquire = this.#acquired.event;
  readonly onReject = this.#rejected.event;
  readonly onRelease = this.#released.event;

  constructor(settings: Settings) {
    this.#s = settings;
    this.#clock = settings.clock;
  }

  get active(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#line.size;
  }

  get limit(): number {
    return this.#limitNow();
  }

  hasRoom(criticality?: Criticality): boolean {
    const line = this.#line;
    if (line.size === 0 && this.#active < this.#limitNow()) return true;
    if (line.size < this.#s.maxQueue) return true;
    const found = criticality === undefined ? 1 : criticalityRank(criticality);
    const rank = found < 0 ? 1 : found;
    if (this.#s.partitions?.entitled(rank, this.#limitNow()) === true) return true;
    return this.#s.maxQueue > 0 && line.displaceable(rank) !== undefined;
  }

  tryAcquire(): AcquireResult {
    return this.freeSlot() ?? this.#reject('queue-full', 1, this.#retryAfterMs());
  }

  /**
   * A slot as {@link tryAcquire} gives it, or `undefined` with no refusal reported: for a
   * caller that waits for a release when none is free (a consumer's pump, see `free-slot.ts`),
   * which nothing was refused.
   */
  freeSlot(): AcquireResult | undefined {
    return this.#slotFree(1) ? this.#grantNow(1) : undefined;
  }

  /**
   * Whether work of `rank` may take a slot now: one is free and nobody waits for it, or the
   * rank's partition is owed one.
   */
  #slotFree(rank: number): boolean {
    return (
      (this.#line.size === 0 && this.#active < this.#limitNow()) ||
      this.#s.partitions?.entitled(rank, this.#limitNow()) === true
    );
  }

  acquire(options?: AcquireOptions): Promise<AcquireResult> {
    const r = this.#request(options);
    return r instanceof QueuedAcquire ? r.result : Promise.resolve(r);
  }

  /** `acquire`'s answer as it stands: a slot or a refusal now, or a place in line. */
  #request(options: AcquireOptions | undefined): AcquireResult | QueuedAcquire {
    let rank = 1;
    let expiresAt = Infinity;
    let signal: AbortSignal | undefined;
    if (options !== undefined) {
      signal = options.signal;
      if (options.criticality !== undefined) rank = checkedCriticalityRank(options.criticality);
      const d = options.deadline;
      if (d !== undefined) expiresAt = typeof d === 'number' ? d : d.expiresAt;
      if (signal?.aborted === true) return this.#reject('aborted', rank, undefined);
    }
    return this.#take(rank, signal, expiresAt);
  }

  enter(criticality: Criticality, deadline: number): LinePlace {
    const r = this.#take(checkedCriticalityRank(criticality), undefined, deadline);
    return r instanceof QueuedAcquire ? r : settledPlace(r);
  }

  /** A slot now, a refusal now, or a place in line. */
  #take(
    rank: number,
    signal: AbortSignal | undefined,
    expiresAt: number,
  ): AcquireResult | QueuedAcquire {
    if (this.#slotFree(rank)) {
      if (expiresAt !== Infinity && expiresAt <= this.#clock.now()) {
        return this.#reject('deadline', rank, undefined);
      }
      return this.#grantNow(rank);
    }
    return this.#enqueue(rank, signal, expiresAt);
  }

  run<T>(fn: Work<T>, options?: AcquireOptions): Promise<T> {
    const signal = runSignal(options);
    // Fast path: a free slot and nothing to check costs no extra await.
    if (
      options?.deadline === undefined &&
      !signal.aborted &&
      this.#line.size === 0 &&
      this.#active < this.#limitNow()
    ) {
      const granted = this.#grantNow(1);
      if (granted.ok) return runHolding(granted.permit, fn, signal);
    }
    const r = this.#request(options);
    return runAnswered(r instanceof QueuedAcquire ? r.result : r, fn, signal);
  }

  takeSlot(): boolean {
    const s = this.#s;
    if (
      this.#line.size !== 0 ||
      s.fixed <= this.#active ||
      s.partitions !== undefined ||
      s.order === 'adaptive' ||
      this.#released.size > 0
    ) {
      return false;
    }
    this.#active++;
    if (this.#acquired.size > 0)
      this.#acquired.emit({ waitMs: 0, active: this.#active, queued: this.#line.size });
    return true;
  }

  releaseSlot(outcome: PermitOutcome): void {
    this.#active--;
    // A listener that subscribed while the slot was held: no hold time was measured for it.
    this.#freed(Number.NaN, outcome);
  }

  releasePermit(permit: SlotPermit, outcome: PermitOutcome | undefined): void {
    this.#active--;
    const s = this.#s;
    s.partitions?.released(permit.rank);
    const sampler = s.sampler;
    let holdMs = Number.NaN;
    if (sampler !== undefined || this.#released.size > 0) {
      holdMs = this.#clock.now() - permit.acquiredAt;
      if (sampler !== undefined && outcome !== 'ignored') {
        feed(sampler, { rttMs: holdMs, inflight: permit.inflight, dropped: outcome === 'dropped' });
      }
    }
    this.#freed(holdMs, outcome ?? 'ok');
  }

  /** After a slot was given back: tells the listeners, and lets the line move. */
  #freed(holdMs: number, outcome: PermitOutcome): void {
    if (this.#released.size > 0) this.#released.emit({ holdMs, active: this.#active, outcome });
    if (this.#line.size > 0) this.#drain();
    // A slot free with nobody waiting: the line whose spacing was measured is gone, and that
    // spacing says nothing of the next one. Kept, it would refuse short deadlines at the door
    // forever after a slow spell, since a refused newcomer never joins a line to measure anew.
    else this.#gapMs = undefined;
  }

  /** A waiter leaves the line without a permit (abort, timeout, shed, CoDel drop). */
  leave(waiter: QueuedAcquire, reason: RejectionReason): void {
    if (waiter.settled) return;
    this.#unlink(waiter);
    waiter.resolve(
      this.#reject(
        reason,
        waiter.rank,
        reason === 'aborted' || reason === 'deadline' ? undefined : this.#retryAfterMs(),
      ),
    );
  }

  #limitNow(): number {
    if (this.#s.fixed > 0) return this.#s.fixed;
    const l = this.#s.source!.current;
    return l >= 1 ? Math.floor(l) : 1;
  }

  #grantNow(rank: number): AcquireResult {
    const s = this.#s;
    this.#active++;
    if (s.order === 'adaptive') this.#minDelayMs = 0;
    // Read the clock only when somebody needs hold times: the fixed-limit path stays clock-free.
    const measure = s.sampler !== undefined || this.#released.size > 0;
    const permit = new SlotPermit(this, measure ? this.#clock.now() : Number.NaN, this.#active);
    if (s.partitions !== undefined) {
      permit.rank = rank;
      s.partitions.acquired(rank);
    }
    if (this.#acquired.size > 0)
      this.#acquired.emit({ waitMs: 0, active: this.#active, queued: this.#line.size });
    return { ok: true, permit };
  }

  #enqueue(
    rank: number,
    signal: AbortSignal | undefined,
    expiresAt: number,
  ): AcquireResult | QueuedAcquire {
    const s = this.#s;
    const now = this.#clock.now();
    if (expiresAt <= now) return this.#reject('deadline', rank, undefined);
    if (s.maxQueue === 0) return this.#reject('queue-full', rank, this.#retryAfterMs());
    const left = expiresAt - now;
    if (left !== Infinity && this.#gapMs !== undefined) {
      const expectedWaitMs = (this.#line.ahead(rank, this.#lifo()) + 1) * this.#gapMs;
      if (left < expectedWaitMs) return this.#reject('deadline', rank, undefined);
    }
    if (this.#line.size >= s.maxQueue) {
      const victim = this.#line.displaceable(rank) as QueuedAcquire | undefined;
      if (victim === undefined) return this.#reject('queue-full', rank, this.#retryAfterMs());
      this.leave(victim, 'shed');
    }
    if (this.#line.size === 0) this.#busySince = now;
    const waitMs = Math.min(s.maxQueueWaitMs, left);
    const waiter = new QueuedAcquire(this, rank, signal);
    waiter.enqueuedAt = now;
    waiter.expiresAt = expiresAt;
    if (left <= s.maxQueueWaitMs) waiter.timeoutReason = 'deadline';
    waiter.timer = this.#clock.setTimer(waitMs, () => {
      waiter.timer = undefined;
      this.leave(waiter, waiter.timeoutReason);
    });
    signal?.addEventListener('abort', waiter, { once: true });
    this.#line.push(waiter);
    return waiter;
  }

  /** Hands free slots to waiters, in order, while slots and waiters remain. */
  #drain(): void {
    const s = this.#s;
    const adaptive = s.order === 'adaptive';
    if (s.partitions !== undefined) this.#drainEntitled(s.partitions);
    while (this.#line.size > 0 && this.#active < this.#limitNow()) {
      const now = this.#clock.now();
      if (adaptive) {
        this.#codel(now);
        if (this.#line.size === 0) return;
      }
      this.#grantWaiter(this.#line.next(this.#lifo()) as QueuedAcquire, now);
    }
  }

  /** Waiters whose criticality is back within its guaranteed share go first, limit or not. */
  #drainEntitled(partitions: Partitions): void {
    for (let rank = 0; rank < rankCount; rank++) {
      while (this.#line.count(rank) > 0 && partitions.entitled(rank, this.#limitNow())) {
        const lifo = this.#lifo();
        const waiter = (lifo ? this.#line.newest(rank) : this.#line.oldest(rank)) as QueuedAcquire;
        this.#grantWaiter(waiter, this.#clock.now());
      }
    }
  }

  #grantWaiter(waiter: QueuedAcquire, now: number): void {
    const s = this.#s;
    const waitMs = now - waiter.enqueuedAt;
    if (s.order === 'adaptive' && waitMs < this.#minDelayMs) this.#minDelayMs = waitMs;
    const gap = now - Math.max(this.#lastGrantAt, this.#busySince);
    this.#gapMs = this.#gapMs === undefined ? gap : this.#gapMs * 0.8 + gap * 0.2;
    this.#lastGrantAt = now;
    this.#unlink(waiter);
    this.#active++;
    const measure = s.sampler !== undefined || this.#released.size > 0;
    const permit = new SlotPermit(this, measure ? now : Number.NaN, this.#active);
    if (s.partitions !== undefined) {
      permit.rank = waiter.rank;
      s.partitions.acquired(waiter.rank);
    }
    if (this.#acquired.size > 0)
      this.#acquired.emit({ waitMs, active: this.#active, queued: this.#line.size });
    waiter.resolve({ ok: true, permit });
  }

  /** CoDel: once per interval decide whether a standing line exists; if so, drop stale waiters. */
  #codel(now: number): void {
    const s = this.#s;
    if (now >= this.#intervalEndsAt) {
      this.#overloaded = this.#minDelayMs > s.codelTargetMs;
      this.#minDelayMs = Infinity;
      this.#intervalEndsAt = now + s.codelIntervalMs;
    }
    if (!this.#overloaded) return;
    const staleBefore = now - 2 * s.codelTargetMs;
    for (let r = 3; r >= 0; r--) {
      for (
        let w = this.#line.oldest(r);
        w !== undefined && w.enqueuedAt < staleBefore;
        w = this.#line.oldest(r)
      ) {
        this.leave(w as QueuedAcquire, 'queue-timeout');
      }
    }
  }

  #lifo(): boolean {
    const order = this.#s.order;
    return order === 'lifo' || (order === 'adaptive' && this.#overloaded);
  }

  #unlink(waiter: QueuedAcquire): void {
    waiter.settled = true;
    this.#line.remove(waiter);
    if (waiter.timer !== undefined) {
      this.#clock.clearTimer(waiter.timer);
      waiter.timer = undefined;
    }
    if (waiter.signal !== undefined) {
      waiter.signal.removeEventListener('abort', waiter);
      waiter.signal = undefined;
    }
  }

  /** Time until the line ahead of a newcomer would drain, if a line has been measured. */
  #retryAfterMs(): number | undefined {
    const gap = this.#gapMs;
    return gap === undefined ? undefined : Math.max(1, Math.ceil((this.#line.size + 1) * gap));
  }

  #reject(reason: RejectionReason, rank: number, retryAfterMs: number | undefined): AcquireResult {
    if (this.#rejected.size > 0) {
      this.#rejected.emit({ reason, criticality: criticalities[rank]!, retryAfterMs });
    }
    return retryAfterMs === undefined
      ? frozenRejections[reason]
      : { ok: false, reason, retryAfterMs };
  }
}
