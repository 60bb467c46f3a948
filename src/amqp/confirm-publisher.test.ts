import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { BacklogFullError } from '../core/errors/backlog-full-error.js';
import { QueueFullError } from '../core/errors/rejected-error.js';
import type { AmqpConfirmChannel, ConfirmCallback } from './amqp-like.js';
import { BrokerBlockedError } from './broker-blocked-error.js';
import { confirmPublisher } from './confirm-publisher.js';

/** A confirm channel that keeps each publish's callback for the test to answer. */
function fakeChannel(): AmqpConfirmChannel & { pending: ConfirmCallback[]; sent: string[] } {
  const events = new EventEmitter();
  const pending: ConfirmCallback[] = [];
  const sent: string[] = [];
  const take = (to: string, cb: ConfirmCallback | undefined): boolean => {
    sent.push(to);
    pending.push(cb!);
    return true;
  };
  return {
    pending,
    sent,
    sendToQueue: (queue, _content, _options, cb) => take(queue, cb),
    publish: (exchange, key, _content, _options, cb) => take(`${exchange}/${key}`, cb),
    once: (event, listener) => events.once(event, listener),
    off: (event, listener) => events.off(event, listener),
  };
}

const body = Buffer.from('x');

describe('confirmPublisher', () => {
  it('resolves on the ack and turns a nack into BacklogFullError from the broker', async () => {
    const channel = fakeChannel();
    const publisher = confirmPublisher({ channel, retryAfterMs: 300 });
    const ok = publisher.send('q', body);
    const refused = publisher.send({ exchange: 'ex', routingKey: 'k' }, body);
    expect(publisher.unconfirmed).toBe(2);
    channel.pending[0]!(null, {});
    channel.pending[1]!(new Error('message nacked'), undefined);
    await expect(ok).resolves.toBeUndefined();
    const error = await refused.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BacklogFullError);
    expect(error).toMatchObject({ by: 'broker', signal: 'later', retryAfterMs: 300 });
    expect(publisher.unconfirmed).toBe(0);
  });

  it('refuses without sending while the connection is blocked, and sends again once unblocked', async () => {
    const channel = fakeChannel();
    const connection = new EventEmitter();
    const publisher = confirmPublisher({ channel, connection });
    connection.emit('blocked', 'low on memory');
    await expect(publisher.send('q', body)).rejects.toThrow(BrokerBlockedError);
    expect(channel.sent).toEqual([]);
    connection.emit('unblocked');
    const sent = publisher.send('q', body);
    channel.pending[0]!(null, {});
    await sent;
    expect(channel.sent).toEqual(['q']);
    publisher.dispose();
    expect(connection.listenerCount('blocked')).toBe(0);
  });

  it('refuses past maxUnconfirmed and when its gate refuses, sending nothing', async () => {
    const channel = fakeChannel();
    let open = true;
    const gate = {
      tryAdmit: () => (open ? { ok: true as const } : { ok: false as const, retryAfterMs: 40 }),
    };
    const publisher = confirmPublisher({ channel, gate, maxUnconfirmed: 1 });
    const first = publisher.send('q', body);
    await expect(publisher.send('q', body)).rejects.toThrow(QueueFullError);
    channel.pending[0]!(null, {});
    await first;
    open = false;
    await expect(publisher.send('q', body)).rejects.toMatchObject({ by: 'gate', retryAfterMs: 40 });
    expect(channel.sent).toEqual(['q']);
  });

  it('stops waiting when the signal aborts, keeping the place until the confirm comes', async () => {
    const channel = fakeChannel();
    const publisher = confirmPublisher({ channel });
    const controller = new AbortController();
    const sent = publisher.send('q', body, { signal: controller.signal });
    controller.abort(new Error('caller left'));
    await expect(sent).rejects.toThrow('caller left');
    expect(publisher.unconfirmed).toBe(1);
    channel.pending[0]!(null, {});
    expect(publisher.unconfirmed).toBe(0);
  });

  it('refuses bad options at construction, naming them', () => {
    expect(() => confirmPublisher({ channel: {} as never })).toThrow(/`channel`/);
    expect(() => confirmPublisher({ channel: fakeChannel(), maxUnconfirmed: 0 })).toThrow(
      /`maxUnconfirmed`/,
    );
    expect(() => confirmPublisher({ channel: fakeChannel(), gate: {} as never })).toThrow(/`gate`/);
  });
});
