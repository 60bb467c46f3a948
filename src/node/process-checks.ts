/**
 * The guard's process-wide checks, shared by every route: the event loop, memory, and the
 * requests in flight across routes (`maxInFlight`). A route's own limit sees only its own
 * slots; these see the whole process, so routes sized on their own cannot together take more
 * than it can hold. They refuse with one answer, {@link processOverloaded}.
 *
 * @module
 */
import type { Clock, Criticality } from '../index.js';
import type { Refusal } from '../http/index.js';
import type { GuardSettings } from './admission-options.js';

/** The process itself is full: its event loop, its memory, or its requests in flight. */
export const processOverloaded: Refusal = Object.freeze({
  reason: 'overloaded',
  retryAfterMs: 1_000,
});

/** The process-wide checks over a guard's settings; counts the requests in flight. */
export class ProcessChecks {
  readonly #clock: Clock;
  readonly #loop: GuardSettings['eventLoop'];
  readonly #memory: GuardSettings['memory'];
  readonly #maxInFlight: number;
  #inflight = 0;

  constructor(settings: GuardSettings) {
    this.#clock = settings.clock;
    this.#loop = settings.eventLoop;
    this.#memory = settings.memory;
    this.#maxInFlight = settings.maxInFlight;
  }

  /** Admitted requests not yet finished, across routes. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Whether the event loop or memory says to shed work of `criticality` now. */
  sheds(criticality: Criticality): boolean {
    const loop = this.#loop;
    if (loop !== undefined && loop.shouldShed(criticality, this.#inflight)) return true;
    const memory = this.#memory;
    return memory !== undefined && memory.shouldShed(criticality, this.#inflight);
  }

  /** Whether the process holds `maxInFlight` requests already (one more would pass it). */
  get full(): boolean {
    return this.#inflight >= this.#maxInFlight;
  }

  /** Counts a request let through. */
  started(): void {
    this.#inflight++;
  }

  /** A request let through at `startedAt` (on the guard's clock) finished. */
  finished(startedAt: number): void {
    this.#inflight--;
    // The clock is read only for a monitor that learns from the work's latency.
    this.#loop?.onComplete(this.#clock.now() - startedAt);
  }
}
