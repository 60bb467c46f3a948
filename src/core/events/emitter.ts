/**
 * Typed per-instance events that cost one length check when nobody listens. Subscribing
 * returns a {@link Subscription}; a listener that throws never corrupts the emitter's owner
 * (its error is rethrown on a later microtask, where the process sees it).
 *
 * @module
 */
import { SpillwayArgumentError } from '../errors/argument-error.js';

/** Returned by every subscription; dispose it to stop listening. */
export interface Subscription extends Disposable {
  dispose(): void;
}

/** A function receiving one event payload. */
export type Listener<T> = (event: T) => void;

/** Subscribes a listener to one kind of event. */
export type Event<T> = (listener: Listener<T>) => Subscription;

/** Listeners per event, per instance. A leak of subscriptions fails loudly instead of growing. */
export const maxListeners = 64;

/** Holds the listeners of one event. Owners keep it private and expose {@link Emitter.event}. */
export class Emitter<T> {
  // Replaced on every change (copy-on-write), so emit can iterate without copying.
  #listeners: readonly Listener<T>[] = [];

  /** Number of listeners; check it before building a payload so idle events cost nothing. */
  get size(): number {
    return this.#listeners.length;
  }

  /** The subscribe function to expose publicly. */
  readonly event: Event<T> = (listener) => {
    if (typeof listener !== 'function') {
      throw new SpillwayArgumentError('listener', 'a function', listener);
    }
    if (this.#listeners.length >= maxListeners) {
      throw new SpillwayArgumentError(
        'listener',
        `one of at most ${maxListeners} listeners per event (dispose old subscriptions)`,
        listener,
      );
    }
    this.#listeners = [...this.#listeners, listener];
    let live = true;
    const dispose = (): void => {
      if (!live) return;
      live = false;
      const index = this.#listeners.indexOf(listener);
      if (index !== -1) this.#listeners = this.#listeners.toSpliced(index, 1);
    };
    return { dispose, [Symbol.dispose]: dispose };
  };

  /** Calls every listener with `payload`. */
  emit(payload: T): void {
    for (const listener of this.#listeners) {
      try {
        listener(payload);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
