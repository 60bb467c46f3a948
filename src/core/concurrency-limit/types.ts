/**
 * The public shapes of a concurrency limit: its options, what `acquire` answers, its events,
 * and the limit itself (with the owner's extra door). Shapes only; `limiter.ts` implements
 * them and `concurrency-limit.ts` builds one.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import type { Criticality } from '../criticality/criticality.js';
import type { RejectionReason } from '../errors/rejected-error.js';
import type { Event } from '../events/emitter.js';
import type { LimitSource } from './limit-source.js';
import type { PartitionShares } from './partitions.js';
import type { Permit, PermitOutcome } from './permit.js';

/** Order in which waiters get slots. */
export type QueueOrder = 'fifo' | 'lifo' | 'adaptive';

/** Options of `concurrencyLimit()`. */
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
  /**
   * `acquire` for a holder that gives up its place by calling `leave()` rather than through an
   * `AbortSignal`: a signal with its abort listener costs about half a kilobyte, alive for as long
   * as the caller waits — the node guard's line is the one that waits for every queued request.
   * `deadline` is an absolute clock reading (`Infinity` for none).
   */
  enter(criticality: Criticality, deadline: number): LinePlace;
}

/** A caller's place in a limit's line (see {@link OwnedConcurrencyLimit.enter}). */
export interface LinePlace {
  /** Settles as `acquire`'s promise does: a permit, or a refusal (`aborted` after `leave`). */
  readonly result: Promise<AcquireResult>;
  /** Gives up the place; a no-op once `result` has settled. */
  leave(): void;
}
