/**
 * A held slot. Released once, by its holder, when the work has settled: never by a timeout,
 * never twice (a second `release()` is a no-op). `using permit = …` works too.
 *
 * @module
 */

/** A slot in a concurrency limit, held until `release()`. */
export interface Permit extends Disposable {
  /** Gives the slot back (to the next waiter, if any). Idempotent. */
  release(): void;
  /** True once released. */
  readonly released: boolean;
}

/** What a permit calls back into; implemented by the limiter that issued it. */
export interface PermitOwner {
  releasePermit(permit: SlotPermit): void;
}

/** The limiter's permit. `acquiredAt` is NaN unless somebody listened for hold times. */
export class SlotPermit implements Permit {
  #owner: PermitOwner | undefined;
  readonly acquiredAt: number;

  constructor(owner: PermitOwner, acquiredAt: number) {
    this.#owner = owner;
    this.acquiredAt = acquiredAt;
  }

  get released(): boolean {
    return this.#owner === undefined;
  }

  release(): void {
    const owner = this.#owner;
    if (owner === undefined) return;
    this.#owner = undefined;
    owner.releasePermit(this);
  }

  [Symbol.dispose](): void {
    this.release();
  }
}
