/**
 * A simulated resource with a known capacity, for testing limits in virtual time: `slots`
 * requests are served at once, each for `serviceTimeMs`; the rest wait in a FIFO line of at most
 * `maxQueue` and beyond that are refused at once. Its capacity is exactly `slots` in flight and
 * `slots / serviceTimeMs` per ms, so a limit's estimate can be checked against the truth.
 * Callback-based and synchronous, so simulations can run on `advanceSync` at full speed.
 *
 * @module
 */
import type { Clock } from '../core/clock/clock.js';
import { systemClock } from '../core/clock/clock.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import {
  clockLike,
  nonNegativeInteger,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../core/internal/validate.js';

/** Options of {@link createSlotServer}. */
export interface SlotServerOptions {
  /** Requests served at once; a function is asked whenever a slot could start. Required. */
  readonly slots: number | (() => number);
  /** How long each request holds a slot, in ms; a function is asked as each one starts. Required. */
  readonly serviceTimeMs: number | (() => number);
  /** Requests that may wait for a slot; more are refused at once. @default 1_000 */
  readonly maxQueue?: number;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** `done(true)` when a request was served, `done(false)` when it was refused. */
export type SlotServerCallback = (ok: boolean) => void;

/** A simulated resource. */
export interface SlotServer {
  /** Sends one request; `done` runs when it has been served or refused. */
  submit(done: SlotServerCallback): void;
  /** Slots in use now. */
  readonly busy: number;
  /** Requests waiting for a slot now. */
  readonly queued: number;
  /** Requests served so far. */
  readonly served: number;
  /** Requests refused so far (line full). */
  readonly refused: number;
}

/**
 * Creates a simulated resource.
 *
 * @example
 * const clock = createVirtualClock();
 * const db = createSlotServer({ slots: 10, serviceTimeMs: 30, clock });
 * db.submit((ok) => permit.release(ok ? 'ok' : 'dropped'));
 */
export function createSlotServer(options: SlotServerOptions): SlotServer {
  const o = optionsObject('createSlotServer options', options);
  return new Server({
    slots: numberOrFunction('slots', o.slots, positiveInteger),
    serviceTimeMs: numberOrFunction('serviceTimeMs', o.serviceTimeMs, positiveNumber),
    maxQueue: nonNegativeInteger('maxQueue', o.maxQueue ?? 1_000),
    clock: clockLike('clock', o.clock ?? systemClock),
  });
}

/** A validated constant as a function, or the user's function as it is. */
function numberOrFunction(
  option: string,
  value: unknown,
  check: (option: string, value: unknown) => number,
): () => number {
  if (typeof value === 'function') return value as () => number;
  if (typeof value !== 'number') {
    throw new SpillwayConfigError(option, 'a positive number or a function returning one', value);
  }
  const n = check(option, value);
  return () => n;
}

interface Settings {
  readonly slots: () => number;
  readonly serviceTimeMs: () => number;
  readonly maxQueue: number;
  readonly clock: Clock;
}

class Server implements SlotServer {
  readonly #s: Settings;
  // A ring buffer of waiting callbacks, sized once.
  readonly #line: (SlotServerCallback | undefined)[];
  #head = 0;
  #queued = 0;
  #busy = 0;
  #served = 0;
  #refused = 0;

  constructor(settings: Settings) {
    this.#s = settings;
    this.#line = new Array<SlotServerCallback | undefined>(settings.maxQueue).fill(undefined);
  }

  get busy(): number {
    return this.#busy;
  }

  get queued(): number {
    return this.#queued;
  }

  get served(): number {
    return this.#served;
  }

  get refused(): number {
    return this.#refused;
  }

  submit(done: SlotServerCallback): void {
    if (this.#busy < this.#s.slots()) this.#start(done);
    else if (this.#queued < this.#s.maxQueue) {
      this.#line[(this.#head + this.#queued) % this.#s.maxQueue] = done;
      this.#queued++;
    } else {
      this.#refused++;
      done(false);
    }
  }

  #start(done: SlotServerCallback): void {
    this.#busy++;
    const ms = this.#s.serviceTimeMs();
    this.#s.clock.setTimer(ms > 0 ? ms : 0, () => {
      this.#busy--;
      this.#served++;
      // A slot count that grew meanwhile lets more than one waiter start.
      while (this.#queued > 0 && this.#busy < this.#s.slots()) {
        const next = this.#line[this.#head]!;
        this.#line[this.#head] = undefined;
        this.#head = (this.#head + 1) % this.#s.maxQueue;
        this.#queued--;
        this.#start(next);
      }
      done(true);
    });
  }
}
