/**
 * A concurrency limit with a line bounded by count and by time. A released slot passes
 * straight to the next waiter (nobody jumps the line); aborted waiters leave at once with
 * their listeners removed; a waiter that could not start before its deadline is refused at the
 * door; a full line makes room for more critical work by shedding the least critical.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { criticalities, criticalityRank, type Criticality } from '../criticality/criticality.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { errorCodes } from '../errors/codes.js';
import { rejectionError, type RejectionReason } from '../errors/rejected-error.js';
import { isSpillwayError } from '../errors/spillway-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import {
  clockLike,
  nonNegativeInteger,
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';
import type { LimitSample, LimitSource } from './limit-source.js';
import { Partitions, type PartitionShares } from './partitions.js';
import { SlotPermit, type Permit, type PermitOutcome, type PermitOwner } from './permit.js';
import { WaiterLine, rankCount, type Waiter } from './waiter-line.js';

export type { LimitSample, LimitSource } from './limit-source.js';
export type { PartitionShares } from './partitions.js';

/** Order in which waiters get slots. */
export type QueueOrder = 'fifo' | 'lifo' | 'adaptive';

/** Options of {@link concurrencyLimit}. */
export interface ConcurrencyLimitOptions {
  /**
   * Most permits held at once: a positive integer or a {@link LimitSource}. Required. When the
   * source has `onSample` (an adaptive limit such as `gradientLimit()`), every released permit
   * is reported to it: hold time, in-flight count at grant, and whether it was released as
   * `'dropped'`.
   */
  readonly limit: number | LimitSource;
  /** Most callers waiting in line; 0 refuses at once when every slot is taken. @default 0 */
  readonly maxQueue?: number;
  /** Longest a caller waits in line, in ms. @default 1_000 */
  readonly maxQueueWaitMs?: number;
  /**
   * `fifo`, `lifo`, or `adaptive`: FIFO until a standing line forms (its shortest wait over
   * `codelIntervalMs` exceeds `codelTargetMs`), then LIFO, dropping waiters older than twice
   * the target (CoDel as run at Facebook). @default 'fifo'
   */
  readonly order?: QueueOrder;
  /** CoDel target wait in ms (`adaptive` only). @default 5 */
  readonly codelTargetMs?: number;
  /** CoDel interval in ms (`adaptive` only). @default 100 */
  readonly codelIntervalMs?: number;
  /**
   * Share of the limit guaranteed to each criticality, e.g. `{ critical: 0.9, sheddable: 0.1 }`
   * (fractions summing to at most 1; a criticality not named gets no guarantee). While slots
   * are free anyone takes them; once all are taken, work still within its share is admitted
   * anyway (past the limit by at most the late shares, and past the line). Off by default.
   */
  readonly partitions?: PartitionShares | undefined;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** Options of {@link ConcurrencyLimit.acquire}. */
export interface AcquireOptions {
  /** Aborting leaves the line at once (`aborted`). */
  readonly signal?: AbortSignal | undefined;
  /** Who goes first, and who is shed from a full line. @default 'critical' */
  readonly criticality?: Criticality | undefined;
  /**
   * When the caller stops caring: an absolute time on the limiter's clock, or anything with
   * `expiresAt` (such as a `Deadline`). Refused at once if the line would outlast it.
   */
  readonly deadline?: number | { readonly expiresAt: number } | undefined;
}

/** The answer to an acquire: a permit, or why not and when a retry could succeed. */
export type AcquireResult =
  | { readonly ok: true; readonly permit: Permit }
  | { readonly ok: false; readonly reason: RejectionReason; readonly retryAfterMs?: number };

/** Emitted when a permit is handed out. */
export interface AcquireEvent {
  /** Milliseconds spent in line (0 when a slot was free). */
  readonly waitMs: number;
  readonly active: number;
  readonly queued: number;
}

/** Emitted when a caller is refused. */
export interface RejectEvent {
  readonly reason: RejectionReason;
  readonly criticality: Criticality;
  readonly retryAfterMs: number | undefined;
}

/** Emitted when a permit is released. */
export interface ReleaseEvent {
  /** Milliseconds the permit was held; NaN if nobody measured when it was acquired. */
  readonly holdMs: number;
  readonly active: number;
  /** How the holder said the work ended. */
  readonly outcome: PermitOutcome;
}

/** The work given to {@link ConcurrencyLimit.run}. */
export type Work<T> = (context: { readonly signal: AbortSignal }) => T | PromiseLike<T>;

/** A concurrency limit. */
export interface ConcurrencyLimit {
  /** Takes a free slot now or refuses (`queue-full`); never waits and never jumps the line. */
  tryAcquire(): AcquireResult;
  /**
   * Whether `acquire` with this criticality could get a slot or a place in line right now: a
   * free slot, room in the line, or a less critical waiter to displace. A synchronous check, so
   * a caller can refuse a hopeless arrival without allocating anything for it. @default 'critical'
   */
  hasRoom(criticality?: Criticality): boolean;
  /** Takes a slot, waiting in line if allowed. Never rejects; refusals are values. */
  acquire(options?: AcquireOptions): Promise<AcquireResult>;
  /**
   * Runs `fn` holding a slot until it settles; throws the matching `RejectedError` if refused.
   * `fn` receives the caller's signal (or the deadline's) to pass down to the work. The permit
   * is released `'dropped'` if `fn` fails after the signal aborted or with a timeout,
   * deadline or overload error, `'ignored'` if it fails otherwise, and `'ok'` if it succeeds.
   */
  run<T>(fn: Work<T>, options?: AcquireOptions & { readonly signal?: AbortSignal }): Promise<T>;
  /** Permits held now. */
  readonly active: number;
  /** Callers waiting now. */
  readonly queued: number;
  /** The limit now. */
  readonly limit: number;
  readonly onAcquire: Event<AcquireEvent>;
  readonly onReject: Event<RejectEvent>;
  readonly onRelease: Event<ReleaseEvent>;
}

const defaults = {
  maxQueue: 0,
  maxQueueWaitMs: 1_000,
  order: 'fifo',
  codelTargetMs: 5,
  codelIntervalMs: 100,
} as const satisfies Partial<ConcurrencyLimitOptions>;

/**
 * Creates a concurrency limit.
 *
 * @example
 * const db = concurrencyLimit({ limit: 10, maxQueue: 10, maxQueueWaitMs: 50 });
 * const r = await db.acquire({ signal });
 * if (!r.ok) return reply503(r.retryAfterMs);
 * try { await query({ signal }); } finally { r.permit.release(); }
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): ConcurrencyLimit {
  return ownedConcurrencyLimit(options);
}

/**
 * A limit as the component that builds it may drive it: a free slot taken and given back
 * without a permit object, the holder answering for releasing it exactly once. `dependency()`
 * takes this path on every call; internal, not exported from the package.
 */
export interface OwnedConcurrencyLimit extends ConcurrencyLimit {
  /**
   * Takes a slot when one is free, nobody waits and nothing needs a permit's details (a limit
   * that learns from samples, partitions, `adaptive` order or `onRelease` listeners): true when
   * taken. Otherwise false, and nothing changed (use `tryAcquire` or `acquire`).
   */
  takeSlot(): boolean;
  /** Gives back a slot `takeSlot` took, once. */
  releaseSlot(outcome: PermitOutcome): void;
}

/** {@link concurrencyLimit}, typed for the component that owns it. */
export function ownedConcurrencyLimit(options: ConcurrencyLimitOptions): OwnedConcurrencyLimit {
  const o = optionsObject('concurrencyLimit options', options);
  const limit = o.limit;
  let fixed = -1;
  let source: LimitSource | undefined;
  if (typeof limit === 'number') fixed = positiveInteger('limit', limit);
  else if (typeof limit === 'object' && limit !== null && typeof limit.current === 'number') {
    source = limit;
  } else {
    throw new SpillwayConfigError(
      'limit',
      'a positive integer or an object with a numeric `current`',
      limit,
    );
  }
  const codelTargetMs = positiveNumber('codelTargetMs', o.codelTargetMs ?? defaults.codelTargetMs);
  const codelIntervalMs = positiveNumber(
    'codelIntervalMs',
    o.codelIntervalMs ?? defaults.codelIntervalMs,
  );
  if (codelTargetMs >= codelIntervalMs) {
    throw new SpillwayConfigError(
      'codelTargetMs',
      `less than codelIntervalMs (${codelIntervalMs})`,
      codelTargetMs,
    );
  }
  return new Limiter({
    fixed,
    source,
    sampler: typeof source?.onSample === 'function' ? source : undefined,
    partitions: Partitions.from(o.partitions),
    maxQueue: nonNegativeInteger('maxQueue', o.maxQueue ?? defaults.maxQueue),
    maxQueueWaitMs: positiveNumber('maxQueueWaitMs', o.maxQueueWaitMs ?? defaults.maxQueueWaitMs),
    order: oneOf('order', o.order ?? defaults.order, ['fifo', 'lifo', 'adaptive']),
    codelTargetMs,
    codelIntervalMs,
    clock: clockLike('clock', o.clock ?? systemClock),
  });
}

interface Settings {
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

/** A waiter that is also its own abort listener (no closure per waiter). */
class QueuedAcquire implements Waiter {
  older: Waiter | undefined = undefined;
  newer: Waiter | undefined = undefined;
  timer: TimerHandle | undefined = undefined;
  settled = false;
  resolve: (result: AcquireResult) => void = noop;
  enqueuedAt = 0;
  expiresAt = Infinity;
  timeoutReason: RejectionReason = 'queue-timeout';
  readonly owner: Limiter;
  readonly rank: number;
  signal: AbortSignal | undefined;

  constructor(owner: Limiter, rank: number, signal: AbortSignal | undefined) {
    this.owner = owner;
    this.rank = rank;
    this.signal = signal;
  }

  handleEvent(): void {
    this.owner.leave(this, 'aborted');
  }
}

const frozenRejections = Object.freeze(
  Object.fromEntries(
    (['queue-full', 'queue-timeout', 'deadline', 'aborted', 'shed'] as const).map((reason) => [
      reason,
      Object.freeze({ ok: false as const, reason }),
    ]),
  ) as Record<RejectionReason, AcquireResult>,
);

const neverAborted = new AbortController().signal;

function noop(): void {}

/** Runs `fn` and releases the permit only once it has settled, however it ends. */
async function runHolding<T>(permit: Permit, fn: Work<T>, signal: AbortSignal): Promise<T> {
  let outcome: PermitOutcome = 'ok';
  try {
    return await fn({ signal });
  } catch (error) {
    outcome = signal.aborted || signalsOverload(error) ? 'dropped' : 'ignored';
    throw error;
  } finally {
    permit.release(outcome);
  }
}

/** Failures that mean "too slow or too busy", which adaptive limits treat as drops. */
function signalsOverload(error: unknown): boolean {
  if (isSpillwayError(error)) {
    return error.code === errorCodes.overloaded || error.code === errorCodes.deadline;
  }
  return error instanceof Error && error.name === 'TimeoutError';
}

class Limiter implements OwnedConcurrencyLimit, PermitOwner {
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
    if (this.#line.size === 0 && this.#active < this.#limitNow()) return this.#grantNow(1);
    if (this.#s.partitions?.entitled(1, this.#limitNow()) === true) return this.#grantNow(1);
    return this.#reject('queue-full', 1, this.#retryAfterMs());
  }

  acquire(options?: AcquireOptions): Promise<AcquireResult> {
    let rank = 1;
    let expiresAt = Infinity;
    let signal: AbortSignal | undefined;
    if (options !== undefined) {
      signal = options.signal;
      if (options.criticality !== undefined) {
        rank = criticalityRank(options.criticality);
        if (rank < 0) {
          throw new SpillwayArgumentError(
            'criticality',
            `one of ${criticalities.join(', ')}`,
            options.criticality,
          );
        }
      }
      const d = options.deadline;
      if (d !== undefined) expiresAt = typeof d === 'number' ? d : d.expiresAt;
      if (signal?.aborted === true)
        return Promise.resolve(this.#reject('aborted', rank, undefined));
    }
    if (
      (this.#line.size === 0 && this.#active < this.#limitNow()) ||
      this.#s.partitions?.entitled(rank, this.#limitNow()) === true
    ) {
      if (expiresAt !== Infinity && expiresAt <= this.#clock.now()) {
        return Promise.resolve(this.#reject('deadline', rank, undefined));
      }
      return Promise.resolve(this.#grantNow(rank));
    }
    return this.#enqueue(rank, signal, expiresAt);
  }

  run<T>(fn: Work<T>, options?: AcquireOptions): Promise<T> {
    const d = options?.deadline;
    const signal =
      options?.signal ??
      (typeof d === 'object' && 'signal' in d && d.signal instanceof AbortSignal
        ? d.signal
        : neverAborted);
    // Fast path: a free slot and nothing to check costs no extra await.
    if (
      d === undefined &&
      !signal.aborted &&
      this.#line.size === 0 &&
      this.#active < this.#limitNow()
    ) {
      const granted = this.#grantNow(1);
      if (granted.ok) return runHolding(granted.permit, fn, signal);
    }
    return this.acquire(options).then((result) => {
      if (!result.ok) throw rejectionError(result.reason, { retryAfterMs: result.retryAfterMs });
      return runHolding(result.permit, fn, signal);
    });
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
  ): Promise<AcquireResult> {
    const s = this.#s;
    const now = this.#clock.now();
    if (expiresAt <= now) return Promise.resolve(this.#reject('deadline', rank, undefined));
    if (s.maxQueue === 0)
      return Promise.resolve(this.#reject('queue-full', rank, this.#retryAfterMs()));
    const left = expiresAt - now;
    if (left !== Infinity && this.#gapMs !== undefined) {
      const expectedWaitMs = (this.#line.ahead(rank, this.#lifo()) + 1) * this.#gapMs;
      if (left < expectedWaitMs) return Promise.resolve(this.#reject('deadline', rank, undefined));
    }
    if (this.#line.size >= s.maxQueue) {
      const victim = this.#line.displaceable(rank) as QueuedAcquire | undefined;
      if (victim === undefined)
        return Promise.resolve(this.#reject('queue-full', rank, this.#retryAfterMs()));
      this.leave(victim, 'shed');
    }
    if (this.#line.size === 0) this.#busySince = now;
    const waitMs = Math.min(s.maxQueueWaitMs, left);
    const waiter = new QueuedAcquire(this, rank, signal);
    waiter.enqueuedAt = now;
    waiter.expiresAt = expiresAt;
    if (left <= s.maxQueueWaitMs) waiter.timeoutReason = 'deadline';
    const promise = new Promise<AcquireResult>((resolve) => {
      waiter.resolve = resolve;
    });
    waiter.timer = this.#clock.setTimer(waitMs, () => {
      waiter.timer = undefined;
      this.leave(waiter, waiter.timeoutReason);
    });
    signal?.addEventListener('abort', waiter, { once: true });
    this.#line.push(waiter);
    return promise;
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

/** Reports a sample; a throwing user-supplied limit must not break the release that fed it. */
function feed(source: LimitSource, sample: LimitSample): void {
  try {
    source.onSample!(sample);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
