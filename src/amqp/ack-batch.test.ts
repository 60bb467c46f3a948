import { describe, expect, it } from 'vitest';
import { AckBatch } from './ack-batch.js';
import type { AmqpMessage } from './amqp-like.js';

const message = (deliveryTag: number): AmqpMessage => ({
  content: Buffer.alloc(0),
  fields: { deliveryTag, redelivered: false },
  properties: {},
});
const endOfTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A batch whose frames and per-message reports are recorded; `unsettled` is the oldest still running. */
function batch(options: { unsettled?: () => number; refuse?: boolean } = {}) {
  const frames: string[] = [];
  const reports: string[] = [];
  const acks = new AckBatch({
    ack: (m, allUpTo) => {
      if (options.refuse === true) throw new Error('Channel closed');
      frames.push(`${allUpTo ? '≤' : ''}${m.fields.deliveryTag}`);
    },
    oldestUnsettled: options.unsettled ?? (() => Infinity),
    acked: (m, sent) => void reports.push(`${m.fields.deliveryTag}${sent ? '' : ' unsent'}`),
  });
  const deliver = (...tags: number[]): AmqpMessage[] =>
    tags.map((t) => {
      const m = message(t);
      acks.delivered(m);
      return m;
    });
  return { acks, frames, reports, deliver };
}

describe('AckBatch', () => {
  it('sends the acks of one turn at its end, as one multiple ack when nothing older is unsettled', async () => {
    const { acks, frames, reports, deliver } = batch();
    for (const m of deliver(1, 2, 3, 4).reverse()) acks.hold(m);
    expect(frames).toEqual([]);
    await endOfTurn();
    expect(frames).toEqual(['≤4']);
    expect(reports.sort()).toEqual(['1', '2', '3', '4']);
  });

  it('acks one by one above the oldest delivery still unsettled', async () => {
    let running = 3; // delivery 3 is still running
    const { acks, frames, reports, deliver } = batch({ unsettled: () => running });
    const [m1, m2, , m4, m5] = deliver(1, 2, 3, 4, 5);
    for (const m of [m5!, m1!, m4!, m2!]) acks.hold(m);
    await endOfTurn();
    expect(frames).toEqual(['≤2', '5', '4']);
    expect(reports).toHaveLength(4);
    running = Infinity;
  });

  it('never uses multiple once a tag was skipped (the channel is shared)', async () => {
    const { acks, frames, deliver } = batch();
    const first = deliver(1, 2);
    for (const m of first) acks.hold(m);
    await endOfTurn();
    expect(frames).toEqual(['≤2']);
    const later = deliver(4, 5, 6); // 3 went to another consumer on the channel
    for (const m of later) acks.hold(m);
    await endOfTurn();
    expect(frames).toEqual(['≤2', '4', '5', '6']);
  });

  it('sends a lone ack on its own', async () => {
    const { acks, frames, deliver } = batch();
    acks.hold(deliver(1)[0]!);
    await endOfTurn();
    expect(frames).toEqual(['1']);
  });

  it('reports every held ack as not sent when the channel refuses', async () => {
    const { acks, reports, deliver } = batch({ refuse: true });
    for (const m of deliver(1, 2, 3)) acks.hold(m);
    await endOfTurn();
    expect(reports.sort()).toEqual(['1 unsent', '2 unsent', '3 unsent']);
  });

  it('holds at most 1,024: the one that reaches the bound sends them all at once', () => {
    const { acks, frames, reports, deliver } = batch();
    const ms = deliver(...Array.from({ length: 1_025 }, (_, i) => i + 1));
    for (const m of ms.slice(0, 1_023)) acks.hold(m);
    expect(frames).toEqual([]);
    acks.hold(ms[1_023]!);
    expect(frames).toEqual(['≤1024']);
    expect(reports).toHaveLength(1_024);
  });

  it('flush sends what is held at once, and nothing twice', async () => {
    const { acks, frames, deliver } = batch();
    for (const m of deliver(1, 2)) acks.hold(m);
    acks.flush();
    expect(frames).toEqual(['≤2']);
    await endOfTurn();
    expect(frames).toEqual(['≤2']);
  });
});
