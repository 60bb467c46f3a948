/**
 * The line in front of one token bucket: callers wait oldest first, and one timer, for the
 * oldest's tokens, is all the line ever arms. Nobody is refused after waiting: a caller joins
 * only when the line's own arithmetic says its tokens will be due within its bound, and leaving
 * only brings the others' turn forward. Internal: used by `tokenBucket` and `keyedTokenBuckets`.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../clock/clock.js';
import { LineWaiter, WaitingLine, type WaiterOwner } from '../internal/waiting-line.js';
import { tokenEpsilon } from './token-bucket-math.js';

/** Waiters counted across every line of one limiter (keyed buckets have a line per key). */
export interface WaitTally {
  waiting: number;
}

/** What a line needs from its bucket. */
export interface PacingSettings {
  readonly clock: Clock;
  readonly ratePerMs: number;
  readonly tally: WaitTally;
  /** Takes `n` tokens now and answers 0, or takes nothing and answers the ms until they are due. */
  readonly take: (n: number) => number;
  /** Called when the last waiter has left (keyed buckets drop the line and unpin the key). */
  readonly emptied?: (() => void) | undefined;
}

/** One bucket's waiters and the timer for the oldest of them. */
export class PacingLine implements WaiterOwner {
  readonly #s: PacingSettings;
  readonly #waiting = new WaitingLine();
  #timer: TimerHandle | undefined;
  // When the oldest waiter's tokens are due, and the tokens the whole line wants.
  #headDueAt = 0;
  #queuedTokens = 0;

  constructor(settings: PacingSettings) {
    this.#s = settings;
  }

  get size(): number {
    return this.#waiting.size;
  }

  /**
   * Whole milliseconds until `n` more tokens, behind everyone waiting, would be granted (the
   * line is not empty): the oldest's due time plus the others' tokens at the refill rate.
   */
  waitBehind(n: number, now: number): number {
    const behind = this.#queuedTokens - this.#waiting.head!.n + n;
    const headLeft = this.#headDueAt > now ? this.#headDueAt - now : 0;
    const ms = Math.ceil(headLeft + (behind - tokenEpsilon / 2) / this.#s.ratePerMs);
    return ms < 1 ? 1 : ms;
  }

  /**
   * Joins the line. `waitMs` is the bucket's answer for these tokens; it arms the timer when this
   * waiter is the first.
   */
  join(n: number, signal: AbortSignal | undefined, waitMs: number): Promise<void> {
    const waiter = new LineWaiter(this, n, signal);
    const promise = this.#waiting.join(waiter);
    this.#queuedTokens += n;
    this.#s.tally.waiting++;
    if (this.#waiting.size === 1) this.#arm(waitMs);
    return promise;
  }

  /** A waiter's signal aborted: it leaves at once; if it was first, the next is served now. */
  abandon(waiter: LineWaiter): void {
    if (waiter.settled) return;
    const first = waiter === this.#waiting.head;
    const reason: unknown = waiter.signal?.reason;
    this.#out(waiter);
    this.#waiting.refuse(waiter, reason);
    if (!first) return;
    if (this.#timer !== undefined) this.#s.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#serve();
  }

  readonly #wake = (): void => {
    this.#timer = undefined;
    this.#serve();
  };

  /** Grants the oldest waiters whose tokens are there, in order; arms a timer for the next. */
  #serve(): void {
    const take = this.#s.take;
    for (let head = this.#waiting.head; head !== undefined; head = this.#waiting.head) {
      // A timer may fire a little early on a real clock: then the answer is the time left.
      const ms = take(head.n);
      if (ms > 0) {
        this.#arm(ms);
        return;
      }
      this.#out(head);
      this.#waiting.grant(head);
    }
    this.#s.emptied?.();
  }

  #arm(ms: number): void {
    const clock = this.#s.clock;
    this.#headDueAt = clock.now() + ms;
    this.#timer = clock.setTimer(ms, this.#wake);
  }

  #out(waiter: LineWaiter): void {
    this.#queuedTokens -= waiter.n;
    this.#s.tally.waiting--;
  }
}
