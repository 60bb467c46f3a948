/**
 * Granted demand, as in Reactive Streams: nothing moves until the receiver grants credit with
 * `request(n)`, and each item sent spends one credit. A sender that finds no credit waits in a
 * bounded line, oldest first. The receiver can `cancel`, the sender can `complete`; either
 * closes the gate for good. A bad `request(n)` (rule 3.9) fails the gate: the error reaches the
 * sender, through its waiting and next sends, and never throws in the receiver. Needs no clock.
 *
 * @module
 */
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { GateClosedError } from '../errors/gate-closed-error.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { WaitLineFullError } from '../errors/wait-line-full-error.js';
import { LineWaiter, WaitingLine, type WaiterOwner } from '../internal/waiting-line.js';
import { rejectSoon } from '../internal/reject-soon.js';
import { nonNegativeInteger, optionsObject, positiveInteger } from '../internal/validate.js';

/** Options of {@link creditGate}. */
export interface CreditGateOptions {
  /** Credit granted before any `request`. At most `maxCredit`. @default 0 */
  readonly initialCredit?: number;
  /**
   * Most credit outstanding at once: the receiver's window. Credit requested beyond it is not
   * kept (demand is capped, as Reactive Streams allows for "effectively unbounded"). Required.
   */
  readonly maxCredit: number;
  /** Most senders waiting for credit at once; one more is refused. @default 1_000 */
  readonly maxWaiting?: number;
}

/** Options of {@link CreditGate.send}. */
export interface SendOptions {
  /**
   * Leaves the line as soon as it aborts: the promise rejects with `signal.reason` and no
   * credit is spent; the listener is removed however the send ends.
   */
  readonly signal?: AbortSignal | undefined;
}

/** `open` until the receiver cancels, the sender completes, or a bad request fails the gate. */
export type CreditGateState = 'open' | 'cancelled' | 'completed' | 'failed';

/** A credit gate between one receiver (grants) and its senders (spend). */
export interface CreditGate {
  /**
   * Receiver: grants `n` more credits (additive; the total outstanding is capped at
   * `maxCredit`), serving waiting senders first, oldest first. `n` must be a positive integer
   * or `Infinity`; anything else fails the gate with a `SpillwayArgumentError` that waiting and
   * later sends reject with (rule 3.9), and this call returns normally. After the gate closed,
   * a no-op (rule 3.6).
   */
  request(n: number): void;
  /**
   * Sender: spends one credit, waiting for it if there is none. Rejects with
   * `WaitLineFullError` when `maxWaiting` senders already wait, with `GateClosedError` once
   * the gate is cancelled or completed, with the request error once it failed, and with
   * `signal.reason` when `signal` aborts (leaving at once, spending nothing).
   */
  send(options?: SendOptions): Promise<void>;
  /**
   * Sender: spends one credit if there is one and nobody waits; never waits. Throws the
   * gate's error once it is closed or failed, so a sender cannot mistake the end for a pause.
   */
  tryTake(): boolean;
  /** Receiver: wants nothing more. Waiting and later sends reject with `GateClosedError` (`cause`: `reason`). Idempotent. */
  cancel(reason?: unknown): void;
  /** Sender: will send nothing more. Waiting and later sends reject with `GateClosedError`. Idempotent. */
  complete(): void;
  /** Credit granted and not yet spent. */
  readonly credit: number;
  /** Senders waiting for credit. */
  readonly waiting: number;
  /** Whether items can still move. */
  readonly state: CreditGateState;
}

const defaults = { initialCredit: 0, maxWaiting: 1_000 } as const;
const open = Promise.resolve();

/**
 * Creates a credit gate.
 *
 * @example
 * const gate = creditGate({ maxCredit: 16 });
 * // receiver: room for 16 items
 * gate.request(16);
 * // sender
 * for (const item of items) { await gate.send({ signal }); deliver(item); }
 * gate.complete();
 */
export function creditGate(options: CreditGateOptions): CreditGate {
  const o = optionsObject('creditGate options', options);
  const maxCredit = positiveInteger('maxCredit', o.maxCredit);
  const initialCredit = nonNegativeInteger(
    'initialCredit',
    o.initialCredit ?? defaults.initialCredit,
  );
  if (initialCredit > maxCredit) {
    throw new SpillwayConfigError(
      'initialCredit',
      `at most maxCredit (${maxCredit})`,
      initialCredit,
    );
  }
  const maxWaiting = nonNegativeInteger('maxWaiting', o.maxWaiting ?? defaults.maxWaiting);
  return new Gate(initialCredit, maxCredit, maxWaiting);
}

class Gate implements CreditGate, WaiterOwner {
  #credit: number;
  readonly #maxCredit: number;
  readonly #maxWaiting: number;
  readonly #line = new WaitingLine();
  #state: CreditGateState = 'open';
  #error: Error | undefined;

  constructor(credit: number, maxCredit: number, maxWaiting: number) {
    this.#credit = credit;
    this.#maxCredit = maxCredit;
    this.#maxWaiting = maxWaiting;
  }

  get credit(): number {
    return this.#credit;
  }

  get waiting(): number {
    return this.#line.size;
  }

  get state(): CreditGateState {
    return this.#state;
  }

  request(n: number): void {
    if (this.#state !== 'open') return;
    if (!(n === Infinity || (Number.isSafeInteger(n) && n > 0))) {
      this.#close('failed', new SpillwayArgumentError('n', 'a positive integer (rule 3.9)', n));
      return;
    }
    const credit = this.#credit + n;
    this.#credit = credit < this.#maxCredit ? credit : this.#maxCredit;
    for (let w = this.#line.head; w !== undefined && this.#credit > 0; w = this.#line.head) {
      this.#credit--;
      this.#line.grant(w);
    }
  }

  send(options?: SendOptions): Promise<void> {
    if (this.#state !== 'open') return Promise.reject(this.#error!);
    const signal = options?.signal;
    if (signal !== undefined) {
      if (!(signal instanceof AbortSignal)) {
        return Promise.reject(new SpillwayArgumentError('signal', 'an AbortSignal', signal));
      }
      if (signal.aborted) return Promise.reject(signal.reason as Error);
    }
    if (this.#credit > 0 && this.#line.size === 0) {
      this.#credit--;
      return open;
    }
    if (this.#line.size >= this.#maxWaiting) {
      return rejectSoon(new WaitLineFullError({ maxWaiting: this.#maxWaiting }));
    }
    return this.#line.join(new LineWaiter(this, 1, signal));
  }

  tryTake(): boolean {
    if (this.#state !== 'open') throw this.#error!;
    if (this.#credit === 0 || this.#line.size > 0) return false;
    this.#credit--;
    return true;
  }

  cancel(reason?: unknown): void {
    if (this.#state !== 'open') return;
    const options = reason === undefined ? undefined : { cause: reason };
    this.#close('cancelled', new GateClosedError('cancelled', options));
  }

  complete(): void {
    if (this.#state !== 'open') return;
    this.#close('completed', new GateClosedError('completed'));
  }

  abandon(waiter: LineWaiter): void {
    if (!waiter.settled) this.#line.refuse(waiter, waiter.signal?.reason);
  }

  #close(state: CreditGateState, error: Error): void {
    this.#state = state;
    this.#error = error;
    this.#credit = 0;
    for (let w = this.#line.head; w !== undefined; w = this.#line.head) this.#line.refuse(w, error);
  }
}
