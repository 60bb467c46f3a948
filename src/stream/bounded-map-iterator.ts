/**
 * The iterator behind `boundedMap`. It pulls from the source (a `PulledSource`) only while a
 * slot is free and the items it holds (running or done, not yet taken) leave room, keeps the
 * done results in a `ResultRing` of `concurrency + maxBuffered` places (in source order when
 * `ordered`), and on the first failure or an early exit stops pulling, aborts the calls in
 * flight, waits for them to settle, closes the source, and only then answers the consumer.
 *
 * @module
 */
import { setMaxListeners } from 'node:events';
import { SpillwayArgumentError } from '../index.js';
import type { BoundedMap, BoundedMapFn, BoundedMapSettings } from './bounded-map-types.js';
import { PulledSource } from './pulled-source.js';
import { ResultRing } from './result-ring.js';

interface Waiter<R> {
  resolve(result: IteratorResult<R>): void;
  reject(error: unknown): void;
}

const done: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value instanceof Promise ||
    (value !== null &&
      (typeof value === 'object' || typeof value === 'function') &&
      typeof (value as { then?: unknown }).then === 'function')
  );
}

/**
 * `idle` until the first `next()`; `running`; `stopping` from the first failure or `return()`
 * until the calls in flight have settled and the source is closed; `stopped` after that or
 * after the last result.
 */
type State = 'idle' | 'running' | 'stopping' | 'stopped';

export class BoundedMapIterator<T, R> implements BoundedMap<Awaited<R>> {
  readonly #source: PulledSource<T>;
  readonly #fn: BoundedMapFn<T, R>;
  readonly #concurrency: number;
  readonly #capacity: number;
  readonly #signal: AbortSignal | undefined;
  readonly #controller = new AbortController();
  readonly #context: { readonly signal: AbortSignal };
  #state: State = 'idle';
  #filling = false;
  #waking = false;
  #listening = false;
  #running = 0;
  readonly #results: ResultRing;
  readonly #waiters: Waiter<Awaited<R>>[] = [];
  #failed = false;
  #error: unknown;
  #errorTaken = false;
  #closeFailed = false;
  #closeError: unknown;
  #closing = false;
  #teardown: Promise<void> | undefined;
  #tornDown: (() => void) | undefined;

  constructor(
    source: AsyncIterable<T> | Iterable<T>,
    fn: BoundedMapFn<T, R>,
    settings: BoundedMapSettings,
  ) {
    this.#source = new PulledSource(source, {
      onStep: this.#onPulled,
      onError: this.#onPullFailed,
    });
    this.#fn = fn;
    this.#concurrency = settings.concurrency;
    this.#capacity = settings.concurrency + settings.maxBuffered;
    this.#results = new ResultRing(this.#capacity, settings.ordered);
    this.#signal = settings.signal;
    this.#context = Object.freeze({ signal: this.#controller.signal });
    // Each call in flight may listen to the shared signal once; more than that is a real leak.
    setMaxListeners(settings.concurrency + 10, this.#controller.signal);
  }

  get active(): number {
    return this.#running;
  }

  get buffered(): number {
    return this.#results.size;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Awaited<R>>> {
    if (this.#state === 'idle') this.#start();
    if (this.#waiters.length === 0) {
      try {
        const result = this.#poll();
        if (result !== undefined) return Promise.resolve(result);
      } catch (error) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown
        return Promise.reject(error);
      }
    }
    // `for await` asks once at a time; a caller asking without awaiting is held to the items the
    // map may hold, so its questions cannot pile up without bound either.
    if (this.#waiters.length >= this.#capacity) {
      return Promise.reject(
        new SpillwayArgumentError(
          'next()',
          `at most ${this.#capacity} calls waiting at once (concurrency + maxBuffered)`,
          this.#waiters.length + 1,
        ),
      );
    }
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  async return(): Promise<IteratorResult<Awaited<R>>> {
    if (this.#state === 'idle') {
      this.#state = 'stopped';
      return done;
    }
    // A consumer that leaves is told nothing more, unless it is still waiting for an answer.
    if (this.#waiters.length === 0) this.#errorTaken = true;
    if (this.#state === 'running') {
      await this.#stop(undefined);
      if (this.#closeFailed && !this.#failed) throw this.#closeError;
    } else if (this.#teardown !== undefined) {
      await this.#teardown;
    }
    return done;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  #start(): void {
    this.#state = 'running';
    try {
      this.#source.open();
    } catch (error) {
      this.#fail(error);
      return;
    }
    const signal = this.#signal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.#fail(signal.reason);
        return;
      }
      signal.addEventListener('abort', this.#onAbort);
      this.#listening = true;
    }
    this.#fill();
  }

  /** The next answer for the consumer, `undefined` to wait; throws the first failure, once. */
  #poll(): IteratorResult<Awaited<R>> | undefined {
    if (this.#state === 'stopping') return undefined;
    if (this.#state === 'stopped') {
      if (this.#failed && !this.#errorTaken) {
        this.#errorTaken = true;
        throw this.#error;
      }
      return done;
    }
    if (this.#results.canTake()) {
      const value = this.#results.take() as Awaited<R>;
      this.#fill();
      return { done: false, value };
    }
    if (this.#source.finished && this.#running === 0 && this.#results.size === 0) {
      this.#state = 'stopped';
      this.#unlisten();
      return done;
    }
    return undefined;
  }

  /** Answers waiting consumers for as long as there are answers. */
  #wake(): void {
    if (this.#waking) return;
    this.#waking = true;
    try {
      while (this.#waiters.length > 0) {
        let result: IteratorResult<Awaited<R>> | undefined;
        try {
          result = this.#poll();
        } catch (error) {
          this.#waiters.shift()!.reject(error);
          continue;
        }
        if (result === undefined) return;
        this.#waiters.shift()!.resolve(result);
      }
    } finally {
      this.#waking = false;
    }
  }

  #canPull(): boolean {
    return (
      this.#state === 'running' &&
      !this.#source.pulling &&
      !this.#source.finished &&
      this.#running < this.#concurrency &&
      this.#running + this.#results.size < this.#capacity
    );
  }

  /** Pulls while there is room: a sync source in a loop, an async one a step at a time. */
  #fill(): void {
    if (this.#filling) return;
    this.#filling = true;
    try {
      while (this.#canPull()) {
        if (!this.#source.sync) {
          this.#source.pull(); // answers #onPulled or #onPullFailed
          return;
        }
        let step: IteratorResult<T>;
        try {
          step = this.#source.next();
        } catch (error) {
          this.#fail(error);
          return;
        }
        if (step.done === true) {
          this.#sourceEnded();
          return;
        }
        this.#run(step.value);
      }
    } finally {
      this.#filling = false;
    }
  }

  readonly #onPulled = (step: IteratorResult<T>): void => {
    if (this.#state !== 'running') {
      // Stopping: the item is dropped unstarted.
      this.#maybeTornDown();
      return;
    }
    if (step.done === true) {
      this.#sourceEnded();
      return;
    }
    this.#run(step.value);
    this.#fill();
  };

  readonly #onPullFailed = (error: unknown): void => {
    if (this.#state !== 'running') this.#maybeTornDown();
    else this.#fail(error);
  };

  #sourceEnded(): void {
    if (this.#running === 0) this.#unlisten();
    this.#wake();
  }

  #run(item: T): void {
    this.#running++;
    const place = this.#results.reserve();
    let result: R | PromiseLike<R>;
    try {
      result = this.#fn(item, this.#context);
    } catch (error) {
      this.#onFnFailed(error);
      return;
    }
    if (!isThenable(result)) this.#done(place, result);
    else Promise.resolve(result).then((value) => this.#done(place, value), this.#onFnFailed);
  }

  #done(place: number, value: unknown): void {
    this.#running--;
    if (this.#state !== 'running') {
      this.#maybeTornDown();
      return;
    }
    this.#results.put(place, value);
    if (this.#source.finished && this.#running === 0) this.#unlisten();
    this.#wake();
    this.#fill();
  }

  readonly #onFnFailed = (error: unknown): void => {
    this.#running--;
    if (this.#state !== 'running') this.#maybeTornDown();
    else this.#fail(error);
  };

  readonly #onAbort = (): void => this.#fail(this.#signal!.reason);

  #fail(error: unknown): void {
    if (this.#state !== 'running') return; // the first failure wins
    this.#failed = true;
    this.#error = error;
    void this.#stop(error);
  }

  /** Stops pulling, drops the results held and aborts the calls in flight; resolves when done. */
  #stop(reason: unknown): Promise<void> {
    this.#state = 'stopping';
    this.#unlisten();
    this.#results.clear();
    this.#teardown = new Promise((resolve) => (this.#tornDown = resolve));
    // An early return aborts with the platform's AbortError; a failure with itself.
    if (reason === undefined) this.#controller.abort();
    else this.#controller.abort(reason);
    this.#maybeTornDown();
    return this.#teardown;
  }

  /** Once nothing runs and no pull is pending, closes the source (unless it ended or threw). */
  #maybeTornDown(): void {
    if (this.#state !== 'stopping' || this.#running > 0 || this.#source.pulling || this.#closing) {
      return;
    }
    this.#closing = true;
    this.#source.close().then(this.#stopped, (error: unknown) => {
      this.#closeFailed = true;
      this.#closeError = error;
      this.#stopped();
    });
  }

  readonly #stopped = (): void => {
    this.#state = 'stopped';
    this.#tornDown!();
    this.#wake();
  };

  #unlisten(): void {
    if (!this.#listening) return;
    this.#listening = false;
    this.#signal!.removeEventListener('abort', this.#onAbort);
  }
}
