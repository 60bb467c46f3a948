/**
 * An abort signal made only when someone reads it. A consumer offers every message's handler a
 * signal; a handler that never reads it should not pay for an `AbortController` (on Node 20 the
 * costliest allocation on the consumer's path). Aborting before anyone read it is remembered.
 *
 * @module
 */

/** A signal created on first read, abortable before that. */
export class LazySignal {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown = undefined;

  /** The signal; aborted already if `abort` was called before this read. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Why it aborted; undefined until then. */
  get reason(): unknown {
    return this.#reason;
  }

  /** Aborts with `reason`, once (later calls are ignored). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
