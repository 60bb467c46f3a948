/**
 * A first-in, first-out line of callers each awaiting a promise, for the primitives that make
 * callers wait for something other than a slot (pacing for tokens, senders for credit). Built on
 * the concurrency limit's intrusive {@link WaiterLine} (one group), so joining, leaving from
 * anywhere and serving the oldest are O(1); a waiter is its own abort listener, and leaving
 * removes that listener. Internal: not exported from the package.
 *
 * @module
 */
import type { TimerHandle } from '../clock/clock.js';
import { WaiterLine, type Waiter } from '../concurrency-limit/waiter-line.js';

/** What a waiter tells its line when its signal aborts. */
export interface WaiterOwner {
  abandon(waiter: LineWaiter): void;
}

function noop(): void {}

/** One caller in a {@link WaitingLine}: how much it wants, its signal and its promise. */
export class LineWaiter implements Waiter {
  readonly rank = 1;
  enqueuedAt = 0;
  expiresAt = Infinity;
  timer: TimerHandle | undefined = undefined;
  older: Waiter | undefined = undefined;
  newer: Waiter | undefined = undefined;
  settled = false;
  resolve: () => void = noop;
  reject: (reason: unknown) => void = noop;
  readonly owner: WaiterOwner;
  /** Units wanted (tokens; 1 for a credit). */
  readonly n: number;
  signal: AbortSignal | undefined;

  constructor(owner: WaiterOwner, n: number, signal: AbortSignal | undefined) {
    this.owner = owner;
    this.n = n;
    this.signal = signal;
  }

  handleEvent(): void {
    this.owner.abandon(this);
  }
}

/** Waiters oldest first; every way out (grant, refusal) detaches the signal listener. */
export class WaitingLine {
  readonly #line = new WaiterLine();

  get size(): number {
    return this.#line.size;
  }

  /** The oldest waiter, next to be served. */
  get head(): LineWaiter | undefined {
    return this.#line.next(false) as LineWaiter | undefined;
  }

  /** Appends `waiter`, listening to its signal; the promise settles when it leaves. */
  join(waiter: LineWaiter): Promise<void> {
    const promise = new Promise<void>((resolve, reject) => {
      waiter.resolve = resolve;
      waiter.reject = reject;
    });
    waiter.signal?.addEventListener('abort', waiter, { once: true });
    this.#line.push(waiter);
    return promise;
  }

  /** Serves `waiter`: it leaves the line and its promise resolves. */
  grant(waiter: LineWaiter): void {
    this.#leave(waiter);
    waiter.resolve();
  }

  /** Refuses `waiter`: it leaves the line and its promise rejects with `reason`. */
  refuse(waiter: LineWaiter, reason: unknown): void {
    this.#leave(waiter);
    waiter.reject(reason);
  }

  #leave(waiter: LineWaiter): void {
    waiter.settled = true;
    this.#line.remove(waiter);
    if (waiter.signal !== undefined) {
      waiter.signal.removeEventListener('abort', waiter);
      waiter.signal = undefined;
    }
  }
}
