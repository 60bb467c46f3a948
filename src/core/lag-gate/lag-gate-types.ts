/**
 * The lag gate's public shapes: its options, its answers and the gate itself.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import type { ReadLag } from './lag-reader.js';

/** What a gate does while it has no fresh reading: admit everything, or refuse everything. */
export type StalePolicy = 'open' | 'closed';

/** Options of {@link lagGate}. */
export interface LagGateOptions {
  /**
   * Reads the consumer's backlog (`{ messages, oldestAgeMs? }`), synchronously or not. Called at
   * most once per `pollMs`, never twice at once; it is given a signal that aborts when the gate
   * gives up on the read (after `staleAfterMs`). A read that throws or rejects is a failed read.
   * Required.
   */
  readonly readLag: ReadLag;
  /** The most messages the consumer may have outstanding (waiting plus unacknowledged). Required. */
  readonly maxLag: number;
  /**
   * Refuse while the oldest unfinished message, at the last reading, is older than this, in ms.
   * @default undefined (no age bound)
   */
  readonly maxAgeMs?: number | undefined;
  /**
   * Least time between two reads of the source, in ms. Keep `maxLag` at least the consumer's
   * drain rate × `pollMs`, or the gate idles the consumer between readings. @default 250
   */
  readonly pollMs?: number | undefined;
  /**
   * A reading older than this, in ms (from when its read started), is stale and the gate follows
   * `onStale`; a read still running this long is abandoned. At least `pollMs`. @default 2_000
   */
  readonly staleAfterMs?: number | undefined;
  /**
   * While the source is stale (down, slow, failing): `closed` refuses everything (`reason:
   * 'stale'`), `open` admits everything. @default 'closed'
   */
  readonly onStale?: StalePolicy | undefined;
  /** Most callers waiting in `admit`'s line at once; one more is refused. @default 1_000 */
  readonly maxWaiting?: number | undefined;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock | undefined;
}

/** Why a gate refused. */
export type LagRefusalReason = 'lag' | 'age' | 'stale' | 'no-reading';

/** The answer to `tryAdmit`: admitted, or refused with the estimated wait and the `later` signal. */
export type AdmitResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** Estimated ms until admission: the excess drained at the measured rate, ≥ 1. */
      readonly retryAfterMs: number;
      readonly signal: 'later';
      /** `lag` (over `maxLag`), `age` (over `maxAgeMs`), `stale`, or `no-reading` (first read). */
      readonly reason: LagRefusalReason;
    };

/** Options of `admit`. */
export interface AdmitOptions {
  /** Messages to admit. At most `maxLag`. @default 1 */
  readonly n?: number | undefined;
  /** Leaves the line as soon as it aborts; the promise rejects with `signal.reason`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The longest wait accepted, in ms. Refused at once (`BacklogFullError`, `by: 'gate'`) when
   * the estimated wait is longer, and when it has waited this long. @default Infinity
   */
  readonly maxWaitMs?: number | undefined;
}

/** A producer's gate on a consumer's lag. */
export interface LagGate {
  /**
   * Admits `n` messages (default 1) if the last reading plus what this gate admitted since that
   * read started, plus `n`, is within `maxLag` (and the oldest message is within `maxAgeMs`),
   * and nobody waits in `admit`'s line. May start a read of the source. Throws
   * `SpillwayArgumentError` when `n` is not an integer from 1 to `maxLag`.
   *
   * **The bound.** For a single producer, the consumer's lag never exceeds `maxLag + f`, where
   * `f` is the number of messages this gate admitted before a reading's read started that had
   * not yet reached the broker when the broker answered (messages in flight at a reading).
   * Messages other producers publish are not counted: give each producer its own share of
   * `maxLag`.
   */
  tryAdmit(n?: number): AdmitResult;
  /**
   * Waits to be admitted, in arrival order. Rejects at once when the estimated wait exceeds
   * `maxWaitMs` (`BacklogFullError`), when `maxWaiting` callers already wait
   * (`WaitLineFullError`), or when `n` is invalid (`SpillwayArgumentError`); rejects with
   * `BacklogFullError` after waiting `maxWaitMs`, and with `signal.reason` if `signal` aborts
   * (leaving the line at once, its timer and listener gone).
   */
  admit(options?: AdmitOptions): Promise<void>;
  /** The backlog as the gate counts it (last reading + admitted since); undefined before one. */
  readonly lag: number | undefined;
  /** Measured drain rate, messages per second; undefined until two readings. */
  readonly drainPerSec: number | undefined;
  /** Callers waiting in `admit`'s line. */
  readonly waiting: number;
  /** Why the last read failed, until a read succeeds (undefined after a good one). */
  readonly lastError: unknown;
}
