/**
 * A caller waiting in a concurrency limit's line: its place, its timer, its signal, and how it
 * is answered. It is its own abort listener, so a waiter costs no closure, and its own
 * {@link LinePlace}, so a holder without a signal leaves by calling `leave()`.
 *
 * @module
 */
import type { TimerHandle } from '../clock/clock.js';
import type { RejectionReason } from '../errors/rejected-error.js';
import type { AcquireResult, LinePlace } from './types.js';
import type { Waiter } from './waiter-line.js';

/** What a waiter needs of the limit it waits in. */
export interface WaiterOwner {
  leave(waiter: QueuedAcquire, reason: RejectionReason): void;
}

function noop(): void {}

/** A waiter that is also its own abort listener and its own place (no closure per waiter). */
export class QueuedAcquire implements Waiter, LinePlace {
  older: Waiter | undefined = undefined;
  newer: Waiter | undefined = undefined;
  timer: TimerHandle | undefined = undefined;
  settled = false;
  resolve: (result: AcquireResult) => void = noop;
  enqueuedAt = 0;
  expiresAt = Infinity;
  timeoutReason: RejectionReason = 'queue-timeout';
  readonly owner: WaiterOwner;
  readonly rank: number;
  signal: AbortSignal | undefined;
  readonly result: Promise<AcquireResult>;

  constructor(owner: WaiterOwner, rank: number, signal: AbortSignal | undefined) {
    this.owner = owner;
    this.rank = rank;
    this.signal = signal;
    this.result = new Promise<AcquireResult>((resolve) => {
      this.resolve = resolve;
    });
  }

  leave(): void {
    this.owner.leave(this, 'aborted');
  }

  handleEvent(): void {
    this.owner.leave(this, 'aborted');
  }
}

/** The place of a caller answered at once: nothing to leave. */
export function settledPlace(result: AcquireResult): LinePlace {
  return { result: Promise.resolve(result), leave: noop };
}

/** One frozen answer per reason, for refusals that carry nothing else. */
export const frozenRejections = Object.freeze(
  Object.fromEntries(
    (['queue-full', 'queue-timeout', 'deadline', 'aborted', 'shed'] as const).map((reason) => [
      reason,
      Object.freeze({ ok: false as const, reason }),
    ]),
  ) as Record<RejectionReason, AcquireResult>,
);
