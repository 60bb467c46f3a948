import { describe, expect, it } from 'vitest';
import { createVirtualClock, type VirtualClock } from '../testing/virtual-clock.js';
import { consumeWithPermits } from './consume-with-permits.js';
import type { FetchedLike, JetStreamMessageLike, PullConsumerLike } from './nats-like.js';

interface Message extends JetStreamMessageLike {
  /** How long its handler runs, in ms. */
  readonly ms: number;
  acked: boolean;
}

/**
 * A pull consumer over an in-memory stream on a virtual clock: a fetch returns at once what the
 * stream holds, up to `max_messages`, or waits `expires` (or a stop) when it holds nothing.
 */
function fakeConsumer(clock: VirtualClock, durations: readonly number[], onAck = () => {}) {
  const stream = durations.map((ms, i): Message => ({
    ms,
    acked: false,
    info: { timestampNanos: clock.wallNow() * 1e6, deliveryCount: 1, streamSequence: i + 1 },
    ack() {
      this.acked = true;
      onAck();
    },
    nak() {
      throw new Error('no message should be refused here');
    },
    term() {
      throw new Error('no message should be terminated here');
    },
  }));
  const pulls: { at: number; asked: number }[] = [];
  const consumer: PullConsumerLike<Message> = {
    info: () => Promise.resolve({ config: { ack_wait: 30e9 } }),
    fetch({ max_messages, expires = 5_000 }) {
      pulls.push({ at: clock.now(), asked: max_messages });
      const batch = stream.splice(0, max_messages);
      const stopped = new AbortController();
      const fetched: FetchedLike<Message> = {
        stop: () => stopped.abort(),
        async *[Symbol.asyncIterator]() {
          if (batch.length === 0) await clock.sleep(expires, stopped.signal).catch(() => {});
          yield* batch;
        },
      };
      return Promise.resolve(fetched);
    },
  };
  return { consumer, pulls };
}

/**
 * Counts the synchronous stretches acks come in, as nats.js does: it writes what was published
 * up to the first microtask after a publish as one socket write.
 */
function ackWrites() {
  let open = false;
  const writes = { count: 0, onAck: () => {} };
  writes.onAck = () => {
    if (open) return;
    open = true;
    writes.count++;
    queueMicrotask(() => (open = false));
  };
  return writes;
}

/** Runs a consumer over `durations` until every message is acked; returns its pulls and peak. */
async function run(durations: readonly number[], limit: number, onAck?: () => void) {
  const clock = createVirtualClock();
  const { consumer, pulls } = fakeConsumer(clock, durations, onAck);
  let running = 0;
  let peak = 0;
  const c = consumeWithPermits({
    consumer,
    limit,
    batch: limit,
    clock,
    handler: async (m) => {
      peak = Math.max(peak, ++running);
      await clock.sleep(m.ms);
      running--;
    },
  });
  for (let i = 0; i < 1_000 && c.counts.acked < durations.length; i++) await clock.advance(1);
  const acked = c.counts.acked;
  const stopped = c.stop();
  await clock.runAll();
  await stopped;
  return { pulls, acked, peak };
}

describe('consumeWithPermits pulls', () => {
  it('asks for a whole batch at first, then for half a batch as soon as it is free', async () => {
    // Four handlers ending one after another at 5 ms: the first two freed start a pull, the
    // other two the next one.
    const { pulls, acked } = await run([5, 5, 5, 5, 5, 5, 5, 5], 4);
    expect(acked).toBe(8);
    expect(pulls.slice(0, 3)).toEqual([
      { at: 0, asked: 4 },
      { at: 5, asked: 2 },
      { at: 5, asked: 2 },
    ]);
  });

  it('pulls again once half a batch is free, not when the slowest handler ends', async () => {
    // Handlers of 1, 2, 3 and 100 ms: the second pull asks for the two permits free at 2 ms
    // (not one at 1 ms: a request per message would cost more than it saves).
    const { pulls, acked } = await run([1, 2, 3, 100, 1, 1], 4);
    expect(acked).toBe(6);
    expect(pulls[1]).toEqual({ at: 2, asked: 2 });
  });

  it('never runs more handlers than the limit', async () => {
    const durations = Array.from({ length: 60 }, (_, i) => 1 + ((i * 7) % 13));
    const { acked, peak } = await run(durations, 8);
    expect(acked).toBe(60);
    expect(peak).toBe(8);
  });

  it('acks the handlers that end in one turn together, as one write', async () => {
    // Two pulls of 4 whose handlers end at once: each pull's acks leave in one stretch.
    const writes = ackWrites();
    const { pulls, acked } = await run([0, 0, 0, 0, 0, 0, 0, 0], 4, writes.onAck);
    expect(acked).toBe(8);
    expect(writes.count).toBeLessThanOrEqual(pulls.length);
    expect(writes.count).toBeGreaterThan(0);
  });
});
