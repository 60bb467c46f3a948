/**
 * The parts of the NATS JetStream client (`@nats-io/jetstream` v3) that `spillway/nats` uses,
 * typed by shape: nothing here imports the package, so it stays an optional peer and any client
 * with these members fits (the v3 objects do; a test checks it).
 *
 * @module
 */

/** A stream sequence pair as consumer info reports it. */
export interface SequenceLike {
  readonly stream_seq: number;
}

/** The consumer info fields the lag source reads (`jsm.consumers.info`). */
export interface ConsumerInfoLike {
  /** Messages matching the consumer and not yet delivered. */
  readonly num_pending: number;
  /** Messages delivered and not yet acknowledged. */
  readonly num_ack_pending: number;
  /** The highest contiguous acknowledged message. */
  readonly ack_floor: SequenceLike;
  readonly config: { readonly ack_wait?: number | undefined };
}

/** The part of a `JetStreamManager` the lag source uses. */
export interface JetStreamManagerLike {
  readonly consumers: {
    info(stream: string, consumer: string): Promise<ConsumerInfoLike>;
  };
  readonly streams: {
    /** v3 resolves null for a missing sequence (v2 rejects). */
    getMessage(stream: string, query: { seq: number }): Promise<{ readonly time: Date } | null>;
  };
}

/** The delivery facts of a JetStream message. */
export interface DeliveryInfoLike {
  /** When the message was stored, ns since the epoch (server wall time). */
  readonly timestampNanos: number;
  /** 1 on first delivery. */
  readonly deliveryCount: number;
  readonly streamSequence: number;
}

/** A JetStream message as a pull consumer delivers it (`JsMsg`). */
export interface JetStreamMessageLike {
  readonly info: DeliveryInfoLike;
  ack(): void;
  /** Redeliver, after `millis` if given. */
  nak(millis?: number): void;
  /** Never redeliver; `reason` goes to the server's advisory. */
  term(reason?: string): void;
}

/** What `fetch` resolves to: the batch's messages, and a way to stop waiting for the rest. */
export interface FetchedLike<M> extends AsyncIterable<M> {
  stop(error?: Error): void;
}

/** The part of a pull `Consumer` (`js.consumers.get(stream, name)`) the permit consumer uses. */
export interface PullConsumerLike<M extends JetStreamMessageLike = JetStreamMessageLike> {
  fetch(options: { max_messages: number; expires?: number }): Promise<FetchedLike<M>>;
  /** `cached: true` answers from the info the client already has. */
  info(cached?: boolean): Promise<{ readonly config: { readonly ack_wait?: number | undefined } }>;
}

/** The publish call of a `JetStreamClient`, with its acknowledgement. */
export interface JetStreamPublishLike<A, O> {
  publish(subject: string, payload?: Uint8Array | string, options?: O): Promise<A>;
}
