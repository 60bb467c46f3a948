/**
 * Publishing into JetStream with the slow-down signal kept: a stream whose limits use
 * `discard: new` refuses a publish once full, and the refusal (API error 10077, "maximum
 * messages exceeded", "maximum bytes exceeded", "maximum messages per subject exceeded") becomes
 * a typed `BacklogFullError` (`by: 'broker'`, signal `later`) instead of an opaque API error.
 * Optionally a `lagGate` is asked first. The PubAck is always awaited: a publisher that does not
 * await it (or uses core `nc.publish` on a stream subject, which the server drops silently when
 * full) has cut off the only signal the broker gives — signal amputation.
 *
 * @module
 */
import { BacklogFullError } from '../core/errors/backlog-full-error.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { nonNegativeNumber, optionsObject } from '../core/internal/validate.js';
import type { LagGate } from '../core/lag-gate/lag-gate.js';
import type { JetStreamPublishLike } from './nats-like.js';

/** The JetStream API error code of a store refusal; a family, told apart by its description. */
const storeFailedCode = 10077;
const fullDescription = /maximum (messages|bytes|messages per subject) exceeded/i;

/**
 * The `BacklogFullError` a JetStream publish failure stands for (a full `discard: new` stream),
 * or undefined for any other failure.
 */
export function backlogFullFrom(error: unknown): BacklogFullError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; message?: unknown };
  if (e.code !== storeFailedCode || typeof e.message !== 'string') return undefined;
  if (!fullDescription.test(e.message)) return undefined;
  return new BacklogFullError({ by: 'broker', detail: e.message, cause: error });
}

/** Options of {@link jetStreamPublisher}. */
export interface JetStreamPublisherOptions<A, O> {
  /** A `JetStreamClient` (`jetstream(nc)`). Required. */
  readonly js: JetStreamPublishLike<A, O>;
  /** Asked before each publish; a refusal throws `BacklogFullError` (`by: 'gate'`). */
  readonly gate?: LagGate | undefined;
  /** Longest a publish waits in the gate's line, in ms. @default 0 (refuse at once) */
  readonly maxWaitMs?: number | undefined;
}

/** A publisher whose refusals are typed. */
export interface JetStreamPublisher<A, O> {
  /**
   * Publishes and awaits the PubAck. Rejects with `BacklogFullError` when the gate refuses
   * (`by: 'gate'`, nothing sent) or the stream is full (`by: 'broker'`); any other failure
   * passes through untouched.
   */
  publish(subject: string, payload?: Uint8Array | string, options?: O): Promise<A>;
}

/**
 * Creates a publisher over a JetStream client.
 *
 * @example
 * const publisher = jetStreamPublisher({ js: jetstream(nc), gate });
 * try { await publisher.publish('orders.new', body); }
 * catch (e) { if (e instanceof BacklogFullError) slowDown(e.retryAfterMs); else throw e; }
 */
export function jetStreamPublisher<A, O>(
  options: JetStreamPublisherOptions<A, O>,
): JetStreamPublisher<A, O> {
  const o = optionsObject('jetStreamPublisher options', options);
  const js = o.js;
  if (typeof js?.publish !== 'function')
    throw new SpillwayConfigError('js', 'a JetStreamClient', js);
  const gate = o.gate;
  const maxWaitMs = nonNegativeNumber('maxWaitMs', o.maxWaitMs ?? 0);
  return {
    async publish(subject, payload, publishOptions) {
      if (gate !== undefined) await gate.admit({ maxWaitMs });
      try {
        return await js.publish(subject, payload, publishOptions);
      } catch (error) {
        throw backlogFullFrom(error) ?? error;
      }
    },
  };
}
