/**
 * The acks a permit consumer decides in one turn of the event loop, sent together at its end.
 * amqplib writes every frame to the socket on its own, so a consumer that acks each message as
 * its handler ends pays one socket write, and the broker one frame, per message. Held to the end
 * of the turn, the acks below the oldest delivery still unsettled leave as one `basic.ack` with
 * `multiple` set; the others leave one by one.
 *
 * `multiple` acknowledges every outstanding delivery on the channel up to its tag, whichever
 * consumer it went to. So it is used only while every delivery on the channel so far came to
 * this consumer — the tags it saw run 1, 2, 3… without a gap. On a channel shared with another
 * consumer (or a `get`) a tag is skipped, and from then on every ack leaves on its own.
 *
 * @module
 */
import type { AmqpMessage } from './amqp-like.js';

/** Acks held past this many are sent at once instead of at the end of the turn. */
const maxHeld = 1_024;

/** Where a batch sends its acks, and what it tells once each has left (or could not). */
export interface AckTarget {
  /** Sends `basic.ack` for `message` (and, with `allUpTo`, every outstanding one before it). */
  ack(message: AmqpMessage, allUpTo: boolean): void;
  /** The tag of the oldest delivery not yet settled, or `Infinity` when there is none. */
  oldestUnsettled(): number;
  /** Called for every held ack once it was sent, or not (`sent` false: the channel refused). */
  acked(message: AmqpMessage, sent: boolean): void;
}

export class AckBatch {
  readonly #target: AckTarget;
  #held: AmqpMessage[] = [];
  #nextTag = 1;
  /** True while every delivery on the channel has come to this consumer, in order. */
  #sole = true;

  constructor(target: AckTarget) {
    this.#target = target;
  }

  /** Notes a delivery's tag, so a gap (a delivery that went elsewhere) turns `multiple` off. */
  delivered(message: AmqpMessage): void {
    if (message.fields.deliveryTag === this.#nextTag) this.#nextTag++;
    else this.#sole = false;
  }

  /** Holds an ack until the end of this turn (or sends what is held, past `maxHeld`). */
  hold(message: AmqpMessage): void {
    const held = this.#held;
    held.push(message);
    if (held.length === 1) setImmediate(this.flush);
    else if (held.length >= maxHeld) this.flush();
  }

  /** Sends every held ack now. */
  readonly flush = (): void => {
    const held = this.#held;
    if (held.length === 0) return;
    this.#held = [];
    // Every delivery up to `top` is settled: the held ones below the oldest unsettled, and the
    // ones already acked or nacked, which `multiple` no longer finds outstanding.
    let top: AmqpMessage | undefined;
    if (this.#sole && held.length > 1) {
      const oldest = this.#target.oldestUnsettled();
      for (const m of held) {
        const tag = m.fields.deliveryTag;
        if (tag < oldest && (top === undefined || tag > top.fields.deliveryTag)) top = m;
      }
    }
    const topTag = top?.fields.deliveryTag ?? 0;
    const covered = top === undefined ? true : this.#send(top, true);
    for (const m of held) {
      if (m.fields.deliveryTag > topTag) this.#target.acked(m, this.#send(m, false));
      else this.#target.acked(m, covered);
    }
  };

  #send(message: AmqpMessage, allUpTo: boolean): boolean {
    try {
      this.#target.ack(message, allUpTo);
      return true;
    } catch {
      return false;
    }
  }
}
