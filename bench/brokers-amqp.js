#!/usr/bin/env node
// Issue 25's consumer target on RabbitMQ: consumeWithPermits against a hand-written amqplib
// consumer with the same prefetch (prefetch(n), consume, ack after the handler), side by side.
// Each round fills a queue of its own with --messages messages (confirmed), starts one
// consumer, and times from `consume` to the last ack; peers alternate round by round so machine
// noise hits them alike. Two handlers: `none` (resolves at once: the consumer's own cost) and
// `io` (a 1 ms timer: throughput bounded by prefetch / handler time). Reports messages per
// second (median of rounds), consumeWithPermits / hand-written, and this process's CPU time per
// message (user + system, median), which a busy machine disturbs less than throughput.
//
// With --fake, no broker: both consumers run against an in-process channel that redelivers as
// soon as a message is acked, so the figure is each consumer's own CPU cost per message.
//
// Usage: npm run build && node bench/brokers-amqp.js [--messages 20000] [--rounds 5]
//        [--prefetch 16] [--dist dist] [--json] [--fake]
// Needs RabbitMQ at 127.0.0.1:5672 (guest/guest); its queues are named spw-bench-* and deleted.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    prefetch: { type: 'string', default: '16' },
    dist: { type: 'string', default: 'dist' },
    url: { type: 'string', default: 'amqp://guest:guest@127.0.0.1:5672' },
    json: { type: 'boolean', default: false },
    fake: { type: 'boolean', default: false },
  },
});
const messages = Number(values.messages);
const rounds = Number(values.rounds);
const prefetch = Number(values.prefetch);
const dist = pathToFileURL(resolve(values.dist, 'amqp', 'index.js')).href;
const { consumeWithPermits } = await import(dist);

const handlers = {
  none: () => Promise.resolve(),
  io: () => new Promise((r) => setTimeout(r, 1)),
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const body = Buffer.alloc(64, 1);
if (values.fake) {
  await ownCost();
  process.exit(0);
}

const connection = await amqp.connect(values.url);
connection.on('error', () => {});
const setup = await connection.createConfirmChannel();

/** A fresh queue holding `count` messages, all confirmed. */
async function filledQueue(count) {
  const queue = `spw-bench-${randomUUID().slice(0, 8)}`;
  await setup.assertQueue(queue, { durable: false });
  for (let i = 0; i < count; i++) {
    if (!setup.sendToQueue(queue, body)) await new Promise((r) => setup.once('drain', r));
  }
  await setup.waitForConfirms();
  return queue;
}

/** Resolves when `count` acks were counted through `onAck`. */
function countAcks(count) {
  let acked = 0;
  let done;
  const finished = new Promise((r) => (done = r));
  return {
    onAck() {
      acked += 1;
      if (acked === count) done();
    },
    finished,
  };
}

const peers = {
  async 'hand-written'(queue, handler) {
    const channel = await connection.createChannel();
    const { onAck, finished } = countAcks(messages);
    await channel.prefetch(prefetch);
    const start = performance.now();
    const cpu = process.cpuUsage();
    await channel.consume(queue, (m) => {
      handler().then(() => {
        channel.ack(m);
        onAck();
      });
    });
    await finished;
    const ms = performance.now() - start;
    const used = process.cpuUsage(cpu);
    await channel.close();
    return { ms, cpuMs: (used.user + used.system) / 1000 };
  },
  async consumeWithPermits(queue, handler) {
    const channel = await connection.createChannel();
    const { onAck, finished } = countAcks(messages);
    const start = performance.now();
    const cpu = process.cpuUsage();
    const consumer = await consumeWithPermits({ channel, queue, limit: prefetch, handler });
    consumer.onSettle(onAck);
    await finished;
    const ms = performance.now() - start;
    const used = process.cpuUsage(cpu);
    await consumer.stop();
    await channel.close();
    return { ms, cpuMs: (used.user + used.system) / 1000 };
  },
};

const results = [];
for (const [handlerName, handler] of Object.entries(handlers)) {
  const rates = Object.fromEntries(Object.keys(peers).map((p) => [p, []]));
  const cpuUs = Object.fromEntries(Object.keys(peers).map((p) => [p, []]));
  for (let round = 0; round < rounds; round++) {
    const order = Object.keys(peers);
    if (round % 2 === 1) order.reverse();
    for (const peer of order) {
      const queue = await filledQueue(messages);
      const { ms, cpuMs } = await peers[peer](queue, handler);
      rates[peer].push((messages / ms) * 1000);
      cpuUs[peer].push((cpuMs * 1000) / messages);
      await setup.deleteQueue(queue);
    }
  }
  const hand = median(rates['hand-written']);
  const ours = median(rates.consumeWithPermits);
  results.push({
    handler: handlerName,
    prefetch,
    messages,
    rounds,
    handWrittenPerSec: Math.round(hand),
    consumeWithPermitsPerSec: Math.round(ours),
    ratio: Number((ours / hand).toFixed(3)),
    handWrittenCpuUsPerMsg: Number(median(cpuUs['hand-written']).toFixed(1)),
    consumeWithPermitsCpuUsPerMsg: Number(median(cpuUs.consumeWithPermits).toFixed(1)),
    all: Object.fromEntries(Object.entries(rates).map(([p, xs]) => [p, xs.map(Math.round)])),
  });
}
await setup.close();
await connection.close();

if (values.json) console.log(JSON.stringify(results, null, 2));
else {
  console.log(`prefetch ${prefetch}, ${messages} messages per round, median of ${rounds} rounds`);
  console.log(
    'handler  hand-written msg/s  consumeWithPermits msg/s  ratio  CPU µs/msg (hand-written / ours)',
  );
  for (const r of results) {
    console.log(
      `${r.handler.padEnd(8)} ${String(r.handWrittenPerSec).padStart(18)}  ${String(r.consumeWithPermitsPerSec).padStart(24)}  ${r.ratio.toFixed(3)}  ${r.handWrittenCpuUsPerMsg} / ${r.consumeWithPermitsCpuUsPerMsg}`,
    );
  }
}

/** Both consumers against a fake channel: µs per message, median of rounds. */
async function ownCost() {
  const count = messages * 10;
  const fakeChannel = () => {
    let onMessage;
    let acked = 0;
    const outstanding = new Set(); // tags delivered and not acked, at most the prefetch
    let sent = 0;
    let limit = 0;
    let done;
    const finished = new Promise((r) => (done = r));
    const push = () => {
      while (outstanding.size < limit && sent < count) {
        sent += 1;
        outstanding.add(sent);
        onMessage({
          content: body,
          fields: { deliveryTag: sent, redelivered: false },
          properties: {},
        });
      }
    };
    const channel = {
      prefetch: async (n) => void (limit = n),
      consume: async (_q, fn) => {
        onMessage = fn;
        Promise.resolve().then(push);
        return { consumerTag: 'fake' };
      },
      cancel: async () => {},
      // With allUpTo (AMQP's `multiple`), every outstanding delivery up to the tag.
      ack: (m, allUpTo) => {
        const tag = m.fields.deliveryTag;
        for (const t of allUpTo ? [...outstanding] : [tag]) {
          if (t <= tag && outstanding.delete(t)) acked += 1;
        }
        if (acked === count) done();
        else Promise.resolve().then(push);
      },
      nack: () => {
        throw new Error('unexpected nack');
      },
      on: () => {},
      off: () => {},
    };
    return { channel, finished };
  };
  const us = { 'hand-written': [], consumeWithPermits: [] };
  for (let round = 0; round < rounds; round++) {
    {
      const { channel, finished } = fakeChannel();
      const t = performance.now();
      await channel.prefetch(prefetch);
      await channel.consume('q', (m) => void Promise.resolve().then(() => channel.ack(m)));
      await finished;
      us['hand-written'].push(((performance.now() - t) * 1000) / count);
    }
    {
      const { channel, finished } = fakeChannel();
      const t = performance.now();
      const consumer = await consumeWithPermits({
        channel,
        queue: 'q',
        limit: prefetch,
        handler: () => {},
      });
      await finished;
      us.consumeWithPermits.push(((performance.now() - t) * 1000) / count);
      await consumer.stop();
    }
  }
  const hand = median(us['hand-written']);
  const ours = median(us.consumeWithPermits);
  const result = {
    mode: 'fake',
    prefetch,
    messages: count,
    rounds,
    handWrittenUsPerMsg: hand,
    consumeWithPermitsUsPerMsg: ours,
  };
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(
      `fake channel, prefetch ${prefetch}, ${count} messages per round, median of ${rounds}`,
    );
    console.log(
      `hand-written ${hand.toFixed(2)} µs/msg, consumeWithPermits ${ours.toFixed(2)} µs/msg`,
    );
  }
}
