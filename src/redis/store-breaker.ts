/**
 * A small breaker in front of Redis, private to the store: after `failures` failures in a
 * row it stops calling for `cooldownMs`, then lets exactly one probe through once the client
 * says it is connected again. A good probe closes it; a bad one opens it for another cooldown.
 * (The general-purpose breaker lives in core; this one only has to keep a dead Redis from
 * costing `timeoutMs` per decision.)
 *
 * @module
 */

/** Breaker state: `closed` calls Redis, `open` does not, `probing` has one call out. */
export type StoreBreakerState = 'closed' | 'open' | 'probing';

/** Consecutive-failure breaker on an injected time source. */
export class StoreBreaker {
  readonly #failures: number;
  readonly #cooldownMs: number;
  #state: StoreBreakerState = 'closed';
  #failed = 0;
  #openUntil = 0;

  constructor(failures: number, cooldownMs: number) {
    this.#failures = failures;
    this.#cooldownMs = cooldownMs;
  }

  get state(): StoreBreakerState {
    return this.#state;
  }

  /** Ms until a probe may go (0 when closed). */
  waitMs(now: number): number {
    return this.#state === 'closed' ? 0 : Math.max(0, this.#openUntil - now);
  }

  /**
   * May a call go now? In `open` state, once the cooldown is over and `ready` says the client
   * is connected, the caller becomes the probe (and must report its outcome).
   */
  allow(now: number, ready: boolean): boolean {
    if (this.#state === 'closed') return true;
    if (this.#state === 'open' && now >= this.#openUntil && ready) {
      this.#state = 'probing';
      return true;
    }
    return false;
  }

  /** A call succeeded. Returns true when this closed the breaker. */
  success(): boolean {
    this.#failed = 0;
    if (this.#state === 'closed') return false;
    this.#state = 'closed';
    return true;
  }

  /** A call failed (error, timeout, not connected). Returns true when this opened it. */
  failure(now: number): boolean {
    this.#failed++;
    if (this.#state === 'probing' || (this.#state === 'closed' && this.#failed >= this.#failures)) {
      const opened = this.#state === 'closed';
      this.#state = 'open';
      this.#openUntil = now + this.#cooldownMs;
      return opened;
    }
    return false;
  }
}
