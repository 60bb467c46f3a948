/**
 * A caller waiting in a concurrency limit's line: its place, its timer, its signal, and how it
 * is answered. It is its own abort listener, so a waiter costs no closure.
 *
 * @module
 */
import type { TimerHandle } from '../clock/clock.js';
import type { RejectionReason } from '../errors/rejected-error.js';
import type { AcquireResult } from './types.js';
import type { Waiter } from './waiter-line.js';

/** What a waiter needs of the limit it waits in. */
export interface WaiterOwner {
  leave(waiter: QueuedAcquire, reason: RejectionReason): void;
}

function noop(): void {}

/** A waiter that is also its own abort listener (no closure per waiter). */
export class QueuedAcquire implements Waiter {
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

  constructor(owner: WaiterOwner, rank: number, signal: AbortSignal | undefined) {
    this.owner = owner;
    this.rank = rank;
    this.signal = signal;
  }

  handleEvent(): void {
    this.owner.leave(this, 'aborted');
  }
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
