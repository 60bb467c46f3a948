/**
 * What `writeAll` listens to on a writable while it writes: `drain`, the end of the stream
 * (`finish`, an error, or a close before finish, through `stream.finished`), and the caller's
 * signal. One waiter at a time; every listener is removed by `dispose()`.
 *
 * @module
 */
import { finished, type Writable } from 'node:stream';
import { SpillwayArgumentError } from '../core/errors/argument-error.js';

/** Settles `wait()`: `drain` for room in the buffer, `finish` for the end of the stream. */
type Awaited = 'drain' | 'finish';

interface Waiter {
  readonly kind: Awaited;
  resolve(): void;
  reject(error: unknown): void;
}

export class WritableWatch {
  readonly #writable: Writable;
  readonly #signal: AbortSignal | undefined;
  readonly #stopWatching: () => void;
  #failed = false;
  #failure: unknown;
  #ended = false;
  #finished = false;
  #ending = false;
  #waiter: Waiter | undefined;
  #settle!: () => void;
  /** Resolves once the stream has ended, well or not (`finished` called back). */
  readonly ended: Promise<void>;

  constructor(writable: Writable, signal: AbortSignal | undefined) {
    this.#writable = writable;
    this.#signal = signal;
    this.ended = new Promise((resolve) => (this.#settle = resolve));
    this.#stopWatching = finished(writable, { readable: false }, this.#onEnd);
    writable.on('drain', this.#onDrain);
    if (signal !== undefined) {
      if (signal.aborted) this.#fail(signal.reason);
      else signal.addEventListener('abort', this.#onAbort);
    }
  }

  /** True once the stream has finished, errored or closed. */
  get hasEnded(): boolean {
    return this.#ended;
  }

  /** True once anything failed: the stream, or the signal aborted. */
  get failed(): boolean {
    return this.#failed;
  }

  /** The first failure (the stream's error, or the signal's reason). */
  get failure(): unknown {
    return this.#failure;
  }

  /** Throws the first failure, if any. */
  check(): void {
    if (this.#failed) throw this.#failure;
  }

  /** Ends the stream; from now on its finishing is expected. */
  end(): void {
    this.#ending = true;
    this.#writable.end();
  }

  /** Waits for `drain` or for the end of the stream; rejects on the first failure. */
  wait(kind: Awaited): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown
    if (this.#failed) return Promise.reject(this.#failure);
    if (kind === 'finish' && this.#finished) return Promise.resolve();
    return new Promise((resolve, reject) => (this.#waiter = { kind, resolve, reject }));
  }

  /** Removes every listener this watch added. */
  dispose(): void {
    this.#stopWatching();
    this.#writable.off('drain', this.#onDrain);
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  #fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#failure = error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(error);
  }

  readonly #onDrain = (): void => {
    if (this.#waiter?.kind !== 'drain') return;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter.resolve();
  };

  readonly #onEnd = (error?: Error | null): void => {
    this.#ended = true;
    if (error !== undefined && error !== null) this.#fail(error);
    else if (!this.#ending) {
      // Ended or destroyed by someone else (or before the call): the rest would be lost.
      this.#fail(ended(this.#writable));
    } else {
      this.#finished = true;
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter?.resolve();
    }
    this.#settle();
  };

  readonly #onAbort = (): void => this.#fail(this.#signal!.reason);
}

function ended(writable: Writable): SpillwayArgumentError {
  return new SpillwayArgumentError(
    'writable',
    'a stream nobody else ends while writeAll writes',
    `a stream already ${writable.destroyed ? 'destroyed' : 'ended'}`,
  );
}
