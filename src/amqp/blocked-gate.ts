/**
 * The producer's gate on RabbitMQ's `connection.blocked`: the broker blocks a publishing
 * connection while a memory or disk alarm is on, and every publish sent meanwhile hangs,
 * unconfirmed. The gate closes on `blocked` and reopens on `unblocked`, so a publisher refuses
 * at once instead. RabbitMQ sends `blocked` to a connection when it publishes during an alarm:
 * the first publish after the alarm still goes out (and hangs until the alarm clears).
 *
 * @module
 */
import { Emitter, type Event } from '../core/events/emitter.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { optionsObject, positiveNumber } from '../core/internal/validate.js';
import type { AmqpConnection } from './amqp-like.js';

/** Options of {@link blockedGate}. */
export interface BlockedGateOptions {
  /** The publishing connection (amqplib's `ChannelModel`). Required. */
  readonly connection: AmqpConnection;
  /** The wait a refusal names, in ms (RabbitMQ does not say when an alarm will clear). @default 1_000 */
  readonly retryAfterMs?: number | undefined;
}

/** The answer of {@link BlockedGate.tryAdmit}, shaped as a `lagGate`'s. */
export type BlockedGateResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly retryAfterMs: number;
      readonly signal: 'later';
      readonly reason: 'blocked';
    };

/** Emitted when the gate closes or reopens. */
export interface BlockedChangeEvent {
  readonly open: boolean;
  /** The broker's reason when it closed (`low on memory`, `low on disk`). */
  readonly detail: string | undefined;
}

/** A gate that is closed while the broker blocks the connection. */
export interface BlockedGate extends Disposable {
  /** False while the connection is blocked. */
  readonly open: boolean;
  /** The broker's reason while blocked. */
  readonly detail: string | undefined;
  /** `{ ok: true }` while open; a `later` refusal while blocked. */
  tryAdmit(): BlockedGateResult;
  readonly onChange: Event<BlockedChangeEvent>;
  /** Stops listening to the connection. Idempotent. */
  dispose(): void;
}

/**
 * Follows `connection`'s `blocked` and `unblocked` events. Publish on a connection of its own:
 * RabbitMQ blocks only connections that publish, so consumers elsewhere keep draining.
 */
export function blockedGate(options: BlockedGateOptions): BlockedGate {
  const o = optionsObject('blockedGate options', options);
  const connection = o.connection;
  if (typeof connection?.on !== 'function' || typeof connection.off !== 'function') {
    throw new SpillwayConfigError('connection', 'an amqplib connection', connection);
  }
  const retryAfterMs = positiveNumber('retryAfterMs', o.retryAfterMs ?? 1_000);
  const changed = new Emitter<BlockedChangeEvent>();
  let open = true;
  let detail: string | undefined;
  const onBlocked = (reason: string): void => {
    open = false;
    detail = typeof reason === 'string' ? reason : undefined;
    changed.emit({ open, detail });
  };
  const onUnblocked = (): void => {
    open = true;
    detail = undefined;
    changed.emit({ open, detail });
  };
  connection.on('blocked', onBlocked);
  connection.on('unblocked', onUnblocked);
  const dispose = (): void => {
    connection.off('blocked', onBlocked);
    connection.off('unblocked', onUnblocked);
  };
  return {
    get open() {
      return open;
    },
    get detail() {
      return detail;
    },
    tryAdmit: () =>
      open ? { ok: true } : { ok: false, retryAfterMs, signal: 'later', reason: 'blocked' },
    onChange: changed.event,
    dispose,
    [Symbol.dispose]: dispose,
  };
}
