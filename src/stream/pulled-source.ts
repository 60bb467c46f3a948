/**
 * The source side of `boundedMap`: one iterator, pulled one step at a time — a sync one in a
 * loop without a promise per item, an async one with a single `next()` outstanding — and
 * closed (`return()`) when the map stops early, unless it ended or threw (then it is finished
 * and must not be closed again).
 *
 * @module
 */

/** What a pull of an async source calls back with; once per `pull()`. */
export interface PullCallbacks<T> {
  onStep(step: IteratorResult<T>): void;
  onError(error: unknown): void;
}

export class PulledSource<T> {
  readonly #iterable: AsyncIterable<T> | Iterable<T>;
  readonly #callbacks: PullCallbacks<T>;
  #iterator: Iterator<T> | AsyncIterator<T> | undefined;
  #sync = false;
  #finished = false;
  #pulling = false;

  constructor(iterable: AsyncIterable<T> | Iterable<T>, callbacks: PullCallbacks<T>) {
    this.#iterable = iterable;
    this.#callbacks = callbacks;
  }

  /** True for a sync iterable: pull it with `next()`, not `pull()`. */
  get sync(): boolean {
    return this.#sync;
  }

  /** True while an async `next()` is outstanding. */
  get pulling(): boolean {
    return this.#pulling;
  }

  /** True once it ended or threw. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Gets the iterator (async if it has one); throws what the iterable throws. */
  open(): void {
    try {
      const s = this.#iterable as AsyncIterable<T> & Iterable<T>;
      if (typeof s[Symbol.asyncIterator] === 'function') {
        this.#iterator = s[Symbol.asyncIterator]();
      } else {
        this.#iterator = s[Symbol.iterator]();
        this.#sync = true;
      }
    } catch (error) {
      this.#finished = true;
      throw error;
    }
  }

  /** A sync source's next step; throws what it throws. */
  next(): IteratorResult<T> {
    try {
      const step = (this.#iterator as Iterator<T>).next();
      if (step.done === true) this.#finished = true;
      return step;
    } catch (error) {
      this.#finished = true;
      throw error;
    }
  }

  /** Asks an async source for its next step; the answer goes to the callbacks. */
  pull(): void {
    this.#pulling = true;
    let pending: PromiseLike<IteratorResult<T>> | IteratorResult<T>;
    try {
      pending = (this.#iterator as AsyncIterator<T>).next();
    } catch (error) {
      this.#onError(error);
      return;
    }
    Promise.resolve(pending).then(this.#onStep, this.#onError);
  }

  /** Closes it unless it ended or threw; rejects with what `return()` throws. */
  close(): Promise<void> {
    const iterator = this.#iterator;
    if (this.#finished || iterator?.return === undefined) return Promise.resolve();
    this.#finished = true;
    try {
      return Promise.resolve(iterator.return()).then(() => undefined);
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown
      return Promise.reject(error);
    }
  }

  readonly #onStep = (step: IteratorResult<T>): void => {
    this.#pulling = false;
    if (step.done === true) this.#finished = true;
    this.#callbacks.onStep(step);
  };

  readonly #onError = (error: unknown): void => {
    this.#pulling = false;
    this.#finished = true;
    this.#callbacks.onError(error);
  };
}
