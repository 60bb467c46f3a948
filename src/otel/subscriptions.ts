/**
 * What an observer holds on to until it is closed: channel subscriptions and other undoings,
 * ended together, once.
 *
 * @module
 */
import type { TypedChannel } from '../channels/channels.js';

/** A set of undoings, run once by `close`. */
export class Subscriptions {
  #undo: (() => void)[] = [];

  /** Subscribes `listener` to `channel` until `close`. */
  on<T>(channel: TypedChannel<T>, listener: (message: T) => void): void {
    channel.subscribe(listener);
    this.#undo.push(() => void channel.unsubscribe(listener));
  }

  /** Runs `undo` at `close`. */
  add(undo: () => void): void {
    this.#undo.push(undo);
  }

  /** Undoes everything, in reverse order. Idempotent. */
  close(): void {
    const undo = this.#undo;
    this.#undo = [];
    for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
  }
}
