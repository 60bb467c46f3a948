/**
 * A RabbitMQ consumer that takes only what it can finish: the channel's prefetch is the number
 * of permits, each delivery runs its handler holding a permit of a core `concurrencyLimit`
 * (fixed or adaptive), with a signal bound to the message's deadline. Deliveries waiting for a
 * permit stay in memory, at most `prefetch` of them (the broker sends no more). How a message
 * is settled is the rule in `settle-rule.ts`.
 *
 * @module
 */
import type { TimerHandle } from '../core/clock/clock.js';
import type { Permit, PermitOutcome } from '../core/concurrency-limit/permit.js';
import { freeSlot } from '../core/concurrency-limit/free-slot.js';
import { DeadlineExceededError } from '../core/errors/rejected-error.js';
import { Emitter, type Event, type Subscription } from '../core/events/emitter.js';
import { AckBatch } from './ack-batch.js';
import type { AmqpMessage } from './amqp-like.js';
import {
  consumerSettings,
  type ConsumeWithPermitsOptions,
  type ConsumerSettings,
  type HandlerContext,
} from './consumer-options.js';
import { LazySignal } from './lazy-signal.js';
import { messageDeadline } from './message-deadline.js';
import { messageRefusalOf } from '../core/retry/settle-message.js';
import {
  settle,
  type DeadLetterReason,
  type HandlerOutcome,
  type Settlement,
} from './settle-rule.js';

/** Emitted once per delivery, when the consumer acks, requeues or dead-letters it. */
export interface SettleEvent {
  readonly message: AmqpMessage;
  readonly settlement: Settlement;
  /** The handler's error, when it failed. */
  readonly error: unknown;
  /** False when the channel had closed, so the broker requeues the message itself. */
  readonly sent: boolean;
}

/** Emitted when a message is dead-lettered (`nack` without requeue), with why. */
export interface DeadLetterEvent {
  readonly message: AmqpMessage;
  readonly reason: DeadLetterReason;
  readonly error: unknown;
}

/** A running consumer. */
export interface PermitConsumer extends AsyncDisposable {
  /** The broker's tag for this consumer. */
  readonly consumerTag: string;
  /** Deliveries holding a permit: handlers running, and refused messages held before requeue. */
  readonly active: number;
  /** Deliveries waiting for a permit (at most `prefetch`). */
  readonly waiting: number;
  /** The prefetch asked of the broker. */
  readonly prefetch: number;
  readonly onSettle: Event<SettleEvent>;
  readonly onDeadLetter: Event<DeadLetterEvent>;
  /**
   * Stops taking deliveries (`basic.cancel`), requeues those waiting for a permit and those
   * held, and resolves once every running handler has settled (each bounded by its deadline
   * plus `settleGraceMs`) and its message is acked or nacked. Idempotent.
   */
  stop(): Promise<void>;
}

/** One delivery, from arrival to settlement. */
interface Delivery {
  readonly message: AmqpMessage;
  readonly deadline: number;
  permit?: Permit;
  timer?: TimerHandle | undefined;
  /** The running handler's signal. */
  life?: LazySignal | undefined;
  finish?: () => void;
}

/**
 * What a handler gets. A class, not an object literal with a getter: V8 builds a fresh shape for
 * each such literal, and that garbage was most of the consumer's own cost per message.
 */
class MessageContext implements HandlerContext {
  readonly deadline: number;
  readonly #life: LazySignal;

  constructor(deadline: number, life: LazySignal) {
    this.deadline = deadline;
    this.#life = life;
  }

  get signal(): AbortSignal {
    return this.#life.signal;
  }
}

class Consumer implements PermitConsumer {
  readonly #s: ConsumerSettings;
  readonly #waiting: Delivery[] = [];
  readonly #holding = new Set<Delivery>();
  readonly #running = new Set<Promise<void>>();
  readonly #closed = new AbortController();
  readonly #settled = new Emitter<SettleEvent>();
  readonly #deadLettered = new Emitter<DeadLetterEvent>();
  #release: Subscription | undefined;
  /** False once stopped, cancelled by the broker, or closed: deliveries go back to the queue. */
  #taking = true;
  #stopping: Promise<void> | undefined;
  #pumping = false;
  consumerTag = '';
  readonly #acks: AckBatch;

  constructor(settings: ConsumerSettings) {
    this.#s = settings;
    this.#acks = new AckBatch({
      ack: (message, allUpTo) => {
        if (this.#closed.signal.aborted) throw this.#closed.signal.reason;
        settings.channel.ack(message, allUpTo);
      },
      oldestUnsettled: () => this.#oldestUnsettled(),
      acked: (message, sent) => {
        if (this.#settled.size > 0) {
          this.#settled.emit({ message, settlement: acked, error: undefined, sent });
        }
      },
    });
    if (settings.sharedLimit) this.#release = settings.limit.onRelease(() => this.#pump());
    settings.channel.on('close', this.#onClose);
  }

  get active(): number {
    return this.#holding.size;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  get prefetch(): number {
    return this.#s.prefetch;
  }

  get onSettle(): Event<SettleEvent> {
    return this.#settled.event;
  }

  get onDeadLetter(): Event<DeadLetterEvent> {
    return this.#deadLettered.event;
  }

  async start(): Promise<this> {
    const { channel, queue, prefetch } = this.#s;
    await channel.prefetch(prefetch, false);
    const reply = await channel.consume(queue, (m) => this.#deliver(m), { noAck: false });
    this.consumerTag = reply.consumerTag;
    return this;
  }

  readonly #onClose = (): void => {
    // The broker requeues every unacknowledged message itself: drop ours, free the permits.
    this.#taking = false;
    this.#closed.abort(new Error('The channel closed'));
    this.#waiting.length = 0;
    for (const d of this.#holding) d.life?.abort(this.#closed.signal.reason);
    for (const d of [...this.#holding]) if (d.timer !== undefined) this.#endHold(d);
  };

  #deliver(message: AmqpMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer (its queue was deleted): nothing more will come.
      this.#taking = false;
      return;
    }
    this.#acks.delivered(message);
    if (!this.#taking || this.#waiting.length >= this.#s.prefetch) {
      // Stopped, or more deliveries than the prefetch allows (cannot happen with a broker that
      // honours basic.qos): back to the queue rather than past the bound.
      this.#send(message, { action: 'requeue', afterMs: 0 }, undefined);
      return;
    }
    const { clock, maxAgeMs } = this.#s;
    const at = messageDeadline({
      properties: message.properties,
      maxAgeMs,
      now: clock.now(),
      wallNow: clock.wallNow(),
    });
    this.#waiting.push({ message, deadline: at });
    this.#pump();
  }

  /** Starts waiting deliveries while permits are free; dead work is dead-lettered, not done. */
  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#waiting.length > 0 && this.#taking) {
        const d = this.#waiting[0]!;
        if (d.deadline <= this.#s.clock.now()) {
          this.#waiting.shift();
          this.#send(d.message, { action: 'dead-letter', reason: 'expired' }, undefined);
          continue;
        }
        // Nothing is refused when no permit is free: the delivery waits for a release.
        const permit = freeSlot(this.#s.limit);
        if (permit === undefined) break;
        this.#waiting.shift();
        d.permit = permit;
        this.#holding.add(d);
        const run = this.#run(d);
        this.#running.add(run);
        void run.finally(() => this.#running.delete(run));
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** Runs the handler; resolves once the delivery is settled and its permit released. */
  #run(d: Delivery): Promise<void> {
    const { clock, settleGraceMs, handler } = this.#s;
    const life = new LazySignal();
    d.life = life;
    return new Promise<void>((resolve) => {
      d.finish = resolve;
      let over = false;
      let timer: TimerHandle | undefined;
      const end = (outcome: HandlerOutcome): void => {
        if (over) return;
        over = true;
        if (timer !== undefined) clock.clearTimer(timer);
        d.life = undefined;
        this.#settle(d, outcome);
      };
      // At the deadline the signal aborts; a handler that ignores it loses its permit after
      // the grace period, and its result is ignored.
      const expire = (): void => {
        life.abort(new DeadlineExceededError());
        timer = clock.setTimer(settleGraceMs, () =>
          end({ ok: false, error: life.reason, expired: true }),
        );
      };
      const leftMs = d.deadline - clock.now();
      timer = clock.setTimer(leftMs > 0 ? leftMs : 0, expire);
      const context = new MessageContext(d.deadline, life);
      Promise.resolve()
        .then(() => handler(d.message, context))
        .then(
          () => end({ ok: true }),
          (error: unknown) =>
            end({ ok: false, error, expired: life.reason instanceof DeadlineExceededError }),
        );
    });
  }

  #settle(d: Delivery, outcome: HandlerOutcome): void {
    const error = outcome.ok ? undefined : outcome.error;
    const settlement = settle(outcome, {
      redelivered: d.message.fields.redelivered,
      remainingMs: d.deadline - this.#s.clock.now(),
      defaultRetryAfterMs: this.#s.defaultRetryAfterMs,
    });
    if (settlement.action === 'requeue' && settlement.afterMs > 0 && this.#taking) {
      // No delayed nack in RabbitMQ: hold the message and its permit, then requeue.
      d.timer = this.#s.clock.setTimer(settlement.afterMs, () => this.#endHold(d, error));
      return;
    }
    this.#send(d.message, settlement, error);
    this.#free(d, permitOutcome(settlement, error));
  }

  #endHold(d: Delivery, error?: unknown): void {
    if (d.timer !== undefined) this.#s.clock.clearTimer(d.timer);
    d.timer = undefined;
    this.#send(d.message, { action: 'requeue', afterMs: 0 }, error);
    this.#free(d, 'dropped');
  }

  #free(d: Delivery, outcome: PermitOutcome): void {
    this.#holding.delete(d);
    d.permit?.release(outcome);
    d.finish?.();
    this.#pump();
  }

  /** The tag of the oldest delivery waiting or holding a permit, `Infinity` when none. */
  #oldestUnsettled(): number {
    let oldest = this.#waiting[0]?.message.fields.deliveryTag ?? Infinity;
    for (const d of this.#holding) oldest = Math.min(oldest, d.message.fields.deliveryTag);
    return oldest;
  }

  /**
   * Acks (at the end of the turn, see ack-batch.ts) or nacks on the channel; a closed channel
   * throws, and the broker requeues anyway.
   */
  #send(message: AmqpMessage, settlement: Settlement, error: unknown): void {
    if (settlement.action === 'ack' && !this.#closed.signal.aborted) {
      this.#acks.hold(message);
      return;
    }
    let sent = !this.#closed.signal.aborted;
    if (sent) {
      try {
        if (settlement.action === 'ack') this.#s.channel.ack(message, false);
        else this.#s.channel.nack(message, false, settlement.action === 'requeue');
      } catch {
        sent = false;
      }
    }
    if (settlement.action === 'dead-letter' && this.#deadLettered.size > 0) {
      this.#deadLettered.emit({ message, reason: settlement.reason, error });
    }
    if (this.#settled.size > 0) this.#settled.emit({ message, settlement, error, sent });
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    this.#taking = false;
    if (!this.#closed.signal.aborted) {
      try {
        await this.#s.channel.cancel(this.consumerTag);
      } catch {
        // The channel closed meanwhile: the broker requeued everything unacknowledged.
      }
    }
    for (const d of this.#waiting.splice(0)) {
      this.#send(d.message, { action: 'requeue', afterMs: 0 }, undefined);
    }
    for (const d of [...this.#holding]) if (d.timer !== undefined) this.#endHold(d);
    await this.#drain();
  }

  async #drain(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
    this.#acks.flush();
    this.#release?.dispose();
    this.#s.channel.off('close', this.#onClose);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

const acked: Settlement = { action: 'ack' };

/** What an adaptive limit learns from how the delivery ended. */
function permitOutcome(settlement: Settlement, error: unknown): PermitOutcome {
  if (settlement.action === 'ack') return 'ok';
  if (settlement.action === 'dead-letter') {
    return settlement.reason === 'failed' ? 'ignored' : 'dropped';
  }
  // A requeue: refused downstream is a congestion signal, a plain failure measured nothing.
  return messageRefusalOf(error) === undefined ? 'ignored' : 'dropped';
}

/**
 * Starts a consumer on `queue` whose prefetch is its permits: at most `limit` handlers run at
 * once, each with a signal that aborts at the message's deadline. A handler that resolves gets
 * its message acked; one that throws, is refused downstream or outlives its deadline is
 * requeued or dead-lettered by the documented rule (docs/brokers.md). Invalid options throw
 * `SpillwayConfigError` before anything is sent to the broker.
 *
 * @example
 * const consumer = await consumeWithPermits({
 *   channel, queue: 'orders', limit: 8, maxAgeMs: 30_000,
 *   handler: async (msg, { signal }) => { await save(JSON.parse(msg.content.toString()), { signal }); },
 * });
 * // …on shutdown: stops deliveries, requeues what has not started, waits for the rest.
 * await consumer.stop();
 */
export async function consumeWithPermits(
  options: ConsumeWithPermitsOptions,
): Promise<PermitConsumer> {
  return new Consumer(consumerSettings(options)).start();
}
