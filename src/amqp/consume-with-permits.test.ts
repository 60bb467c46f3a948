import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../core/errors/overloaded-error.js';
import { createVirtualClock } from '../testing/virtual-clock.js';
import type { AmqpConsumeChannel, AmqpMessage } from './amqp-like.js';
import { consumeWithPermits } from './consume-with-permits.js';
import type { MessageHandler } from './consumer-options.js';

/** A channel that records acks and nacks; `deliver` hands the consumer a message. */
function fakeChannel() {
  const events = new EventEmitter();
  const settled: string[] = [];
  let onMessage: (m: AmqpMessage | null) => void = () => {};
  let tag = 0;
  const channel: AmqpConsumeChannel = {
    prefetch: () => Promise.resolve(),
    consume: (_queue, fn) => {
      onMessage = fn;
      return Promise.resolve({ consumerTag: 'c1' });
    },
    cancel: () => Promise.resolve(),
    ack: (m, allUpTo) =>
      void settled.push(`ack ${allUpTo === true ? 'up to ' : ''}${String(m.properties.messageId)}`),
    nack: (m, _all, requeue) =>
      void settled.push(
        `${requeue === true ? 'requeue' : 'dead'} ${String(m.properties.messageId)}`,
      ),
    on: (event, listener) => events.on(event, listener),
    off: (event, listener) => events.off(event, listener),
  };
  const deliver = (id: string): void =>
    onMessage({
      content: Buffer.from(id),
      fields: { deliveryTag: ++tag, redelivered: false },
      properties: { messageId: id },
    });
  return { channel, settled, deliver, close: () => events.emit('close') };
}

async function start(handler: MessageHandler, limit = 1) {
  const clock = createVirtualClock();
  const fake = fakeChannel();
  const consumer = await consumeWithPermits({
    channel: fake.channel,
    queue: 'q',
    limit,
    maxAgeMs: 1_000,
    settleGraceMs: 100,
    clock,
    handler,
  });
  return { clock, consumer, ...fake };
}

describe('consumeWithPermits (virtual clock, fake channel)', () => {
  it('aborts at the deadline and frees the permit of a handler that ignores it after settleGraceMs', async () => {
    let signal: AbortSignal | undefined;
    const { clock, consumer, deliver, settled } = await start((_m, context) => {
      signal = context.signal;
      return new Promise(() => {});
    });
    deliver('a');
    await clock.flush();
    await clock.advance(999);
    expect(signal?.aborted).toBe(false);
    await clock.advance(1);
    expect(signal?.aborted).toBe(true);
    await clock.advance(99);
    expect(consumer.active).toBe(1);
    await clock.advance(1);
    expect(consumer.active).toBe(0);
    expect(settled).toEqual(['dead a']);
  });

  it('holds a refused message for its retryAfterMs, then requeues it and frees the permit', async () => {
    let calls = 0;
    const { clock, consumer, deliver, settled } = await start(() => {
      calls += 1;
      throw new DependencyOverloadedError('busy', { signal: 'later', retryAfterMs: 250 });
    });
    deliver('a');
    deliver('b'); // waits: the one permit is held
    await clock.flush();
    await clock.advance(249);
    expect([consumer.active, consumer.waiting, settled.length, calls]).toEqual([1, 1, 0, 1]);
    await clock.advance(1);
    expect(settled).toEqual(['requeue a']);
    await clock.flush();
    expect(calls).toBe(2); // b got the permit
  });

  it('on channel close, aborts running handlers, drops held messages and frees every permit', async () => {
    const { clock, consumer, deliver, settled, close } = await start(
      (_m, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () =>
            reject(new Error('aborted', { cause: signal.reason })),
          ),
        ),
    );
    deliver('a');
    deliver('b');
    await clock.flush();
    expect([consumer.active, consumer.waiting]).toEqual([1, 1]);
    close();
    await consumer.stop();
    expect([consumer.active, consumer.waiting]).toEqual([0, 0]);
    expect(settled).toEqual([]); // nothing can be sent on a closed channel: the broker requeues
  });

  it('acks the handlers that end in one turn with one multiple ack, and tells of each', async () => {
    let finish: () => void = () => {};
    const ended = new Promise<void>((resolve) => (finish = resolve));
    const { clock, consumer, deliver, settled } = await start(() => ended, 4);
    const told: string[] = [];
    consumer.onSettle((e) => told.push(`${String(e.message.properties.messageId)} ${e.sent}`));
    for (const id of ['a', 'b', 'c', 'd', 'e']) deliver(id); // e waits for a permit
    await clock.flush();
    expect(consumer.waiting).toBe(1);
    finish(); // a–d end; e takes a freed permit and ends in the same turn
    await clock.flush();
    expect(settled).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual(['ack up to e']);
    expect(told).toEqual(['a true', 'b true', 'c true', 'd true', 'e true']);
    await consumer.stop();
    expect(settled).toEqual(['ack up to e']);
  });

  it('stop() sends the acks held for the end of the turn before it resolves', async () => {
    const { clock, consumer, deliver, settled } = await start(() => undefined, 2);
    deliver('a');
    deliver('b');
    await clock.flush();
    expect(settled).toEqual([]);
    await consumer.stop();
    expect(settled).toEqual(['ack up to b']);
  });

  it('requeues deliveries that arrive after stop', async () => {
    const { clock, consumer, deliver, settled } = await start(() => undefined);
    await consumer.stop();
    deliver('late');
    await clock.flush();
    expect(settled).toEqual(['requeue late']);
  });
});
