/**
 * A JetStream pull consumer that takes only the work it can finish: each pull asks for as many
 * messages as the concurrency limit has free permits, each message runs holding one permit with
 * a signal bound to its deadline, and how the handler ends decides ack, delayed nak or term
 * (see `settle.ts`). The server never holds more of this consumer's messages than it has
 * permits, so a slow consumer's backlog stays in the stream, where the lag source can see it.
 *
 * @module
 */
import { systemClock, type Clock } from '../core/clock/clock.js';
import { concurrencyLimit } from '../core/concurrency-limit/concurrency-limit.js';
import type { Permit } from '../core/concurrency-limit/permit.js';
import { freeSlot } from '../core/concurrency-limit/free-slot.js';
import type { ConcurrencyLimit } from '../core/concurrency-limit/types.js';
import { Emitter, type Event } from '../core/events/emitter.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import {
  clockLike,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../core/internal/validate.js';
import { HandlerRun } from './handler-run.js';
import type { FetchedLike, JetStreamMessageLike } from './nats-like.js';
import type {
  ConsumeWithPermitsOptions,
  PermitConsumer,
  PermitConsumerCounts,
  SettleEvent,
} from './permit-consumer-types.js';
import { settle, type NatsSettlement } from './settle.js';

export type * from './permit-consumer-types.js';

const defaults = { batch: 100, expiresMs: 5_000, retryDelayMs: 1_000, maxDeliveries: 5 } as const;
/** A free permit is looked for again at least this often, in ms (an adaptive limit may grow). */
const roomPollMs = 250;
const maxPullFailures = 5;
/** Settlements held for the end of the turn at most; past it they are applied at once. */
const maxUnapplied = 1_024;

function limitOf(limit: unknown, clock: Clock): ConcurrencyLimit {
  if (typeof limit === 'number') return concurrencyLimit({ limit, clock });
  const l = limit as Partial<ConcurrencyLimit> | null;
  if (typeof l?.tryAcquire !== 'function' || typeof l.onRelease !== 'function') {
    throw new SpillwayConfigError('limit', 'a positive integer or a concurrencyLimit', limit);
  }
  return limit as ConcurrencyLimit;
}

class Consumer<M extends JetStreamMessageLike> implements PermitConsumer<M> {
  readonly #o: ConsumeWithPermitsOptions<M>;
  readonly #clock: Clock;
  readonly #limit: ConcurrencyLimit;
  readonly #batch: number;
  readonly #expiresMs: number;
  readonly #retryDelayMs: number;
  readonly #maxDeliveries: number;
  readonly #maxAgeMs: number;
  readonly #settled = new Emitter<SettleEvent<M>>();
  readonly #stopping = new AbortController();
  #handlerTimeoutMs = 30_000;
  /** Pulls under way (each holds at least one permit, so there are at most `limit`). */
  readonly #pulls = new Set<Promise<void>>();
  readonly #fetches = new Set<FetchedLike<M>>();
  /** Permits held by pulls for messages not yet arrived. */
  #reserved = 0;
  #failures = 0;
  #lastFailure: unknown;
  #inFlight = 0;
  #drained: (() => void) | undefined;
  /**
   * Settlements decided in this turn of the event loop, applied together at its end: nats.js
   * sends what is published in one synchronous stretch as one socket write, but flushes at the
   * first microtask after a publish, so acks sent as each handler ends would leave in one write
   * each — costlier than everything else the consumer does for a message.
   */
  #unapplied: [M, NatsSettlement, unknown][] = [];
  #counts = { acked: 0, naked: 0, termed: 0 };
  readonly done: Promise<void>;

  constructor(o: ConsumeWithPermitsOptions<M>) {
    this.#o = o;
    this.#clock = clockLike('clock', o.clock ?? systemClock);
    this.#limit = limitOf(o.limit, this.#clock);
    if (typeof o.consumer?.fetch !== 'function') {
      throw new SpillwayConfigError('consumer', 'a JetStream pull consumer', o.consumer);
    }
    if (typeof o.handler !== 'function')
      throw new SpillwayConfigError('handler', 'a function', o.handler);
    this.#batch = positiveInteger('batch', o.batch ?? defaults.batch);
    this.#expiresMs = positiveNumber('expiresMs', o.expiresMs ?? defaults.expiresMs);
    this.#retryDelayMs = positiveNumber('retryDelayMs', o.retryDelayMs ?? defaults.retryDelayMs);
    this.#maxDeliveries = positiveInteger(
      'maxDeliveries',
      o.maxDeliveries ?? defaults.maxDeliveries,
    );
    this.#maxAgeMs = o.maxAgeMs === undefined ? Infinity : positiveNumber('maxAgeMs', o.maxAgeMs);
    if (o.handlerTimeoutMs !== undefined) {
      this.#handlerTimeoutMs = positiveNumber('handlerTimeoutMs', o.handlerTimeoutMs);
    }
    o.signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.done = this.#loop();
    // `done` is for whoever awaits it; unawaited, a failure must not crash the process.
    this.done.catch(() => undefined);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get counts(): PermitConsumerCounts {
    return { ...this.#counts };
  }

  get onSettle(): Event<SettleEvent<M>> {
    return this.#settled.event;
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    for (const f of this.#fetches) f.stop();
    await this.done.catch(() => undefined);
    if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    this.#applyAll();
  }

  /**
   * Takes free permits and starts a pull for them, without waiting for it to end: while one
   * pull's handlers run, the permits they free go into the next pull.
   */
  async #loop(): Promise<void> {
    if (this.#o.handlerTimeoutMs === undefined) await this.#readAckWait();
    const stopping = this.#stopping.signal;
    while (!stopping.aborted) {
      if (this.#failures >= maxPullFailures) {
        this.#stopping.abort();
        throw this.#lastFailure;
      }
      if (this.#failures > 0) {
        await this.#clock.sleep(this.#retryDelayMs, stopping).catch(() => undefined);
      }
      const permits = await this.#permits();
      if (permits.length === 0) continue;
      this.#reserved += permits.length;
      const pull = this.#pull(permits).then(
        () => void (this.#failures = 0),
        (error: unknown) => {
          this.#failures++;
          this.#lastFailure = error;
        },
      );
      this.#pulls.add(pull);
      void pull.finally(() => {
        this.#pulls.delete(pull);
        this.#reserved -= permits.length;
        for (const p of permits) p.release('ignored');
      });
      // A pull that failed at once is counted before the next is started.
      await Promise.race([pull, Promise.resolve()]);
    }
    await Promise.all(this.#pulls);
  }

  async #readAckWait(): Promise<void> {
    const info = await this.#o.consumer.info(true).catch(() => undefined);
    const ackWaitNs = info?.config.ack_wait;
    if (typeof ackWaitNs === 'number' && ackWaitNs > 0) {
      const ms = ackWaitNs / 1e6;
      this.#handlerTimeoutMs = ms - Math.min(1_000, ms / 10);
    }
  }

  /**
   * Up to `batch` free permits, waiting for releases until at least half a batch is free (or
   * none of this consumer's handlers is running, so waiting would not free any): a pull for
   * one message each time a handler ends would cost a request per message.
   */
  async #permits(): Promise<Permit[]> {
    const permits: Permit[] = [];
    const limit = this.#limit;
    for (;;) {
      while (permits.length < this.#batch) {
        // Nothing is refused when no permit is free: the pull waits for a release.
        const permit = freeSlot(limit);
        if (permit === undefined) break;
        permits.push(permit);
      }
      const enough = Math.ceil(Math.min(this.#batch, limit.limit) / 2);
      if (permits.length >= enough || this.#stopping.signal.aborted) return permits;
      if (permits.length > 0 && this.#inFlight === 0 && this.#reserved === 0) return permits;
      await this.#waitForRoom();
    }
  }

  #waitForRoom(): Promise<void> {
    const stopping = this.#stopping.signal;
    if (stopping.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        sub.dispose();
        this.#clock.clearTimer(timer);
        stopping.removeEventListener('abort', done);
        resolve();
      };
      const sub = this.#limit.onRelease(done);
      const timer = this.#clock.setTimer(roomPollMs, done);
      stopping.addEventListener('abort', done, { once: true });
    });
  }

  /** One pull for as many messages as `permits`; each message takes one away. */
  async #pull(permits: Permit[]): Promise<void> {
    const fetched = await this.#o.consumer.fetch({
      max_messages: permits.length,
      expires: this.#expiresMs,
    });
    this.#fetches.add(fetched);
    if (this.#stopping.signal.aborted) fetched.stop();
    try {
      for await (const message of fetched) {
        const permit = permits.pop();
        if (permit !== undefined) this.#reserved--;
        if (permit === undefined || this.#stopping.signal.aborted) {
          // Nothing may run now: give it straight back for redelivery.
          permit?.release('ignored');
          this.#settle(message, { action: 'nak', delayMs: 0 }, undefined);
          continue;
        }
        this.#start(message, permit);
      }
    } finally {
      this.#fetches.delete(fetched);
    }
  }

  #start(message: M, permit: Permit): void {
    const clock = this.#clock;
    const now = clock.now();
    const ageMs = clock.wallNow() - message.info.timestampNanos / 1e6;
    const lifeEndsAt = now + this.#maxAgeMs - (ageMs > 0 ? ageMs : 0);
    if (lifeEndsAt <= now) {
      permit.release('dropped');
      this.#settle(message, { action: 'term', reason: 'expired' }, undefined);
      return;
    }
    const expiresAt = Math.min(lifeEndsAt, now + this.#handlerTimeoutMs);
    this.#inFlight++;
    const run = new HandlerRun(clock, expiresAt, (end) => {
      const settlement = settle(end, {
        deliveryCount: message.info.deliveryCount,
        lifeLeftMs: lifeEndsAt - clock.now(),
        retryDelayMs: this.#retryDelayMs,
        maxDeliveries: this.#maxDeliveries,
      });
      permit.release(end.ok ? 'ok' : settlement.action === 'nak' ? 'dropped' : 'ignored');
      if (--this.#inFlight === 0) this.#drained?.();
      this.#settle(message, settlement, end.ok ? undefined : end.error);
    });
    run.run(() => this.#o.handler(message, run));
  }

  #settle(message: M, settlement: NatsSettlement, error: unknown): void {
    const unapplied = this.#unapplied;
    unapplied.push([message, settlement, error]);
    if (unapplied.length === 1) setImmediate(this.#applyAll);
    else if (unapplied.length >= maxUnapplied) this.#applyAll();
  }

  readonly #applyAll = (): void => {
    const unapplied = this.#unapplied;
    if (unapplied.length === 0) return;
    this.#unapplied = [];
    for (const [message, settlement, error] of unapplied) this.#apply(message, settlement, error);
  };

  #apply(message: M, settlement: NatsSettlement, error: unknown): void {
    try {
      if (settlement.action === 'ack') {
        message.ack();
        this.#counts.acked++;
      } else if (settlement.action === 'nak') {
        message.nak(settlement.delayMs > 0 ? Math.ceil(settlement.delayMs) : undefined);
        this.#counts.naked++;
      } else {
        // No reason on the wire: servers before 2.10 ignore a `+TERM` that carries one, and the
        // message stays unacknowledged (then is redelivered). The reason is in `onSettle`.
        message.term();
        this.#counts.termed++;
      }
    } catch {
      // The connection closed under it: the server redelivers after its ack wait.
    }
    if (this.#settled.size > 0) this.#settled.emit({ message, settlement, error });
  }
}

/**
 * Starts consuming. Nothing is fetched beyond free permits, so in-flight handlers never exceed
 * the limit; a stopped consumer loses nothing (what it held unacknowledged is redelivered).
 *
 * @example
 * const c = consumeWithPermits({
 *   consumer: await js.consumers.get('ORDERS', 'worker'),
 *   limit: 16,
 *   maxAgeMs: 30_000,
 *   handler: async (m, { signal }) => { await handle(m.json(), { signal }); },
 * });
 * // later: await c.stop();
 */
export function consumeWithPermits<M extends JetStreamMessageLike>(
  options: ConsumeWithPermitsOptions<M>,
): PermitConsumer<M> {
  return new Consumer(
    optionsObject('consumeWithPermits options', options) as ConsumeWithPermitsOptions<M>,
  );
}
