/**
 * A plain server's own capacity: K slots (following the capacity schedule) behind a bounded
 * FIFO line that never gives up on a request. This is the model of the machine, not of a
 * Spillway primitive: a server without Spillway has no limiter, its requests simply wait for
 * the CPU, the pool or the thread they need. Spillway's admission in front of it stays the real
 * `concurrencyLimit`.
 *
 * Written here rather than borrowed from `concurrencyLimit` because a waiter there is a promise,
 * a timer and an entry in a linked line — about a kilobyte held and three allocations per
 * request, the whole cost of a run whose line holds tens of thousands. Here a waiter is two
 * slots of an array, and a slot freed hands itself to the first waiter at once.
 *
 * @module
 */

/** A request as a server sees it. */
export interface SimRequest {
  /** The propagated deadline on the simulator's clock (Infinity: none). */
  readonly expiresAt: number;
  /** Set by the caller when it gives up; work served after that is wasted. */
  abandoned: boolean;
}

/** How a request's answer reaches its caller: `undefined` for success, else what it received. */
export type Done = (failure: Error | undefined) => void;

/**
 * How a server answers a request: as {@link Done}, with the request it answers. A caller can
 * then answer all its requests with one function (their state on the request), so a request
 * waiting in a long line holds no closure of its own.
 */
export type Answer = (failure: Error | undefined, request: SimRequest) => void;

/** What a granted waiter does with its slot (called once; it must `release` it later). */
export type Serve = (request: SimRequest, answer: Answer) => void;

/** Slots and the line. */
export class ServerSlots {
  readonly #limit: { readonly current: number };
  readonly #maxQueue: number;
  readonly #serve: Serve;
  #busy = 0;
  /** Waiting requests, each as two entries (request, answer), from `#head` on. */
  #line: (SimRequest | Answer | undefined)[] = [];
  #head = 0;

  /** `limit.current` is read whenever a slot could be taken (capacity changes over time). */
  constructor(limit: { readonly current: number }, maxQueue: number, serve: Serve) {
    this.#limit = limit;
    this.#maxQueue = maxQueue;
    this.#serve = serve;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return (this.#line.length - this.#head) / 2;
  }

  /**
   * Serves `request` now if a slot is free and nobody waits, else puts it in line; `false` when
   * the line is full (the request was neither served nor queued).
   */
  enter(request: SimRequest, answer: Answer): boolean {
    if (this.waiting === 0 && this.#busy < this.#limit.current) {
      this.#busy++;
      this.#serve(request, answer);
      return true;
    }
    if (this.waiting >= this.#maxQueue) return false;
    this.#line.push(request, answer);
    return true;
  }

  /** A slot is given back: the first waiters take the slots now free, in order. */
  release(): void {
    this.#busy--;
    while (this.waiting > 0 && this.#busy < this.#limit.current) {
      const line = this.#line;
      const request = line[this.#head] as SimRequest;
      const answer = line[this.#head + 1] as Answer;
      line[this.#head] = line[this.#head + 1] = undefined;
      this.#head += 2;
      this.#busy++;
      this.#serve(request, answer);
    }
    this.#compact();
  }

  /** Empties the line, calling `refuse` with each waiter and its `answer`, in order. */
  clear(refuse: Serve): void {
    const line = this.#line;
    const head = this.#head;
    this.#line = [];
    this.#head = 0;
    for (let i = head; i < line.length; i += 2) {
      refuse(line[i] as SimRequest, line[i + 1] as Answer);
    }
  }

  /** Drops the served entries once they are most of the array (amortised O(1) a waiter). */
  #compact(): void {
    const head = this.#head;
    if (head === 0) return;
    if (head === this.#line.length) {
      this.#line.length = 0;
      this.#head = 0;
    } else if (head >= 1024 && head * 2 >= this.#line.length) {
      this.#line = this.#line.slice(head);
      this.#head = 0;
    }
  }
}
