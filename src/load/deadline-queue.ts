/**
 * The client deadlines of requests in flight, in one list ordered by deadline, under one timer.
 *
 * A timer per request costs an object per request (and its removal on every answer); at
 * 20,000 requests a second that garbage alone made the young-generation collector pause the
 * generator every few hundred milliseconds, long enough to break its schedule. Requests are
 * sent in nearly the order of their deadlines, so inserting from the tail costs a step or two,
 * and removing an answered one is O(1). The list holds only what is in flight, which the
 * run's in-flight cap bounds.
 *
 * @module
 */
import { armTimer } from './timer.js';

/** What the queue needs of an entry (intrusive links, so adding allocates nothing). */
export interface DeadlineEntry {
  /** When it expires, on the run's clock (ms). */
  deadlineAt: number;
  prevDeadline: DeadlineEntry | undefined;
  nextDeadline: DeadlineEntry | undefined;
  inDeadlines: boolean;
}

export class DeadlineQueue<T extends DeadlineEntry> {
  readonly #now: () => number;
  readonly #onExpired: (entry: T) => void;
  #head: T | undefined = undefined;
  #tail: T | undefined = undefined;
  #timer: NodeJS.Timeout | undefined = undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  /** `onExpired` is called once for each entry whose deadline has passed (it is removed first). */
  constructor(now: () => number, onExpired: (entry: T) => void) {
    this.#now = now;
    this.#onExpired = onExpired;
  }

  add(entry: T, deadlineAt: number): void {
    if (entry.inDeadlines) this.remove(entry);
    entry.deadlineAt = deadlineAt;
    entry.inDeadlines = true;
    let after = this.#tail;
    while (after !== undefined && after.deadlineAt > deadlineAt) after = after.prevDeadline as T;
    entry.prevDeadline = after;
    entry.nextDeadline = after === undefined ? this.#head : after.nextDeadline;
    if (entry.nextDeadline === undefined) this.#tail = entry;
    else entry.nextDeadline.prevDeadline = entry;
    if (after === undefined) {
      this.#head = entry;
      this.#arm(deadlineAt);
    } else after.nextDeadline = entry;
  }

  remove(entry: T): void {
    if (!entry.inDeadlines) return;
    entry.inDeadlines = false;
    const { prevDeadline: prev, nextDeadline: next } = entry;
    if (prev === undefined) this.#head = next as T | undefined;
    else prev.nextDeadline = next;
    if (next === undefined) this.#tail = prev as T | undefined;
    else next.prevDeadline = prev;
    entry.prevDeadline = undefined;
    entry.nextDeadline = undefined;
    // The timer stays armed: when it fires it finds the new head not yet due and re-arms.
  }

  /** Stops the timer and forgets every entry (without calling `onExpired`). */
  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    while (this.#head !== undefined) this.remove(this.#head);
  }

  #arm(at: number): void {
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = armTimer(this.#fire, at - this.#now());
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    // Node's timers count from the loop's cached clock and can fire a little early: an entry
    // is never expired before its deadline; the timer is re-armed for it instead.
    const now = this.#now();
    let head = this.#head;
    while (head !== undefined && head.deadlineAt <= now) {
      this.remove(head);
      this.#onExpired(head);
      head = this.#head;
    }
    if (head !== undefined) this.#arm(head.deadlineAt);
  };
}
