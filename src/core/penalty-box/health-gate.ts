/**
 * Lifting on metrics, not the clock: a penalty box with a health gate lets clients out of a
 * cool-off block only while the service is healthy again, and then a few at a time.
 *
 * The gate reads a number the user supplies — requests in flight, queue depth, consumer lag —
 * every `sampleMs`. It is *healthy* once `samples` readings in a row are at or below
 * `healthyAt`; one reading above (or one that throws, or is not a number) makes it unhealthy
 * at once. While unhealthy, no block ends and no step is lifted. When it turns healthy, each
 * held client is released at its own offset within `spreadMs` (from a hash of its key, so a
 * client's turn does not move between requests), so they come back spread out rather than as
 * one wave; a reading above the threshold meanwhile holds the rest again.
 *
 * The gate starts healthy: a box made during an overload learns of it at the first reading.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../clock/clock.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import {
  nonNegativeNumber,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../internal/validate.js';

/** Options of a penalty box's health gate (`liftWhen`). */
export interface LiftWhenOptions {
  /**
   * A reading of how loaded the service is, higher meaning busier: e.g.
   * `() => guard.inflight`, a queue's depth, a consumer's lag. Called every `sampleMs`;
   * keep it cheap. Required.
   */
  readonly load: () => number;
  /** Readings at or below this are healthy. Required. */
  readonly healthyAt: number;
  /** Healthy readings in a row before blocks may end and steps may lift. @default 3 */
  readonly samples?: number;
  /** Ms between readings. @default 1_000 */
  readonly sampleMs?: number;
  /**
   * Ms over which held clients are let back once healthy, each at an offset from its key.
   * 0 releases them together. @default samples × sampleMs
   */
  readonly spreadMs?: number;
}

/** The health gate a penalty box consults (one per box; stop it with `close`). */
export class HealthGate {
  readonly #load: () => number;
  readonly #healthyAt: number;
  readonly #samples: number;
  readonly #sampleMs: number;
  readonly #spreadMs: number;
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  #inARow: number;
  /** When the gate last turned healthy; undefined while unhealthy. */
  #healthySince: number | undefined;

  constructor(options: LiftWhenOptions, clock: Clock) {
    const o = optionsObject('liftWhen', options);
    if (typeof o.load !== 'function') {
      throw new SpillwayConfigError('liftWhen.load', 'a function returning a number', o.load);
    }
    if (typeof o.healthyAt !== 'number' || !Number.isFinite(o.healthyAt)) {
      throw new SpillwayConfigError('liftWhen.healthyAt', 'a finite number', o.healthyAt);
    }
    this.#load = o.load;
    this.#healthyAt = o.healthyAt;
    this.#samples = positiveInteger('liftWhen.samples', o.samples ?? 3);
    this.#sampleMs = positiveNumber('liftWhen.sampleMs', o.sampleMs ?? 1_000);
    this.#spreadMs = nonNegativeNumber(
      'liftWhen.spreadMs',
      o.spreadMs ?? this.#samples * this.#sampleMs,
    );
    this.#clock = clock;
    this.#inARow = this.#samples;
    // Healthy from the start, and long enough that nobody waits for a spread.
    this.#healthySince = clock.now() - this.#spreadMs;
    this.#arm();
  }

  /** True while the service reads healthy. */
  get healthy(): boolean {
    return this.#healthySince !== undefined;
  }

  /** When the gate last turned healthy; undefined while it is not. */
  get healthySince(): number | undefined {
    return this.#healthySince;
  }

  /**
   * Ms until `key`, held past the end of its block, may go: 0 when it may now. While
   * unhealthy, an estimate: the readings still needed, then the key's offset.
   */
  releaseWaitMs(key: string, now: number): number {
    const offset = this.#spreadMs === 0 ? 0 : hashOf(key) % Math.ceil(this.#spreadMs);
    const since = this.#healthySince;
    if (since === undefined) {
      return (this.#samples - this.#inARow) * this.#sampleMs + offset;
    }
    const at = since + offset;
    return at > now ? at - now : 0;
  }

  /** Takes one reading now (the timer does this every `sampleMs`). */
  sample(): void {
    let reading: number;
    try {
      reading = this.#load();
    } catch {
      reading = NaN;
    }
    // NaN, a non-number or a throw reads as unhealthy: a broken signal must not open the gate.
    if (typeof reading === 'number' && reading <= this.#healthyAt) {
      if (this.#inARow < this.#samples) this.#inARow++;
      if (this.#inARow === this.#samples && this.#healthySince === undefined) {
        this.#healthySince = this.#clock.now();
      }
    } else {
      this.#inARow = 0;
      this.#healthySince = undefined;
    }
  }

  /** Stops reading. Idempotent. */
  close(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timer = this.#clock.setTimer(
      this.#sampleMs,
      () => {
        this.sample();
        if (this.#timer !== undefined) this.#arm();
      },
      { unref: true },
    );
  }
}

/** FNV-1a of `key`'s UTF-16 code units: a stable, well-spread offset per key. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
