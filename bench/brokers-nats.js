#!/usr/bin/env node
// Issue 25's consumer target on NATS JetStream: consumeWithPermits against a hand-written pull
// loop with the same batch size (fetch `batch`, run the handlers side by side, ack each after
// its handler, wait for the batch, fetch again), side by side. Each round fills a memory stream
// of its own with --messages messages, starts one consumer, and times from the start to the
// last ack; peers alternate round by round so machine noise hits them alike. Two handlers:
// `none` (resolves at once: the consumer's own cost) and `io` (a 1 ms timer: throughput bounded
// by batch / handler time). Reports messages per second (median of rounds) and
// consumeWithPermits / hand-written.
//
// Usage: npx tsc -p tsconfig.build.json --outDir .dist-x && node bench/brokers-nats.js
//        [--messages 20000] [--rounds 5] [--batch 16] [--dist dist] [--json]
// Needs NATS with JetStream at 127.0.0.1:4222; its streams are named spw_bench_* and deleted.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    batch: { type: 'string', default: '16' },
    dist: { type: 'string', default: 'dist' },
    json: { type: 'boolean', default: false },
  },
});
const messages = Number(values.messages);
const rounds = Number(values.rounds);
const batch = Number(values.batch);
const { consumeWithPermits } = await import(
  pathToFileURL(resolve(values.dist, 'nats', 'index.js')).href
);

const handlers = {
  none: () => Promise.resolve(),
  io: () => new Promise((r) => setTimeout(r, 1)),
};

const nc = await connect({ servers: '127.0.0.1:4222' });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);

/** A memory stream holding `messages` messages and a durable pull consumer on it. */
async function filled() {
  const name = `spw_bench_${randomBytes(4).toString('hex')}`;
  await jsm.streams.add({ name, subjects: [`${name}.x`], storage: 'memory' });
  await jsm.consumers.add(name, {
    durable_name: 'w',
    ack_policy: AckPolicy.Explicit,
    max_ack_pending: 10_000,
  });
  const acks = [];
  for (let i = 0; i < messages; i++) {
    acks.push(js.publish(`${name}.x`, 'm'));
    if (acks.length === 256) await Promise.all(acks.splice(0));
  }
  await Promise.all(acks);
  return { name, consumer: await js.consumers.get(name, 'w') };
}

/** The loop a user would write: fetch a batch, handle it side by side, ack, repeat. */
async function handWritten(consumer, handler) {
  let done = 0;
  while (done < messages) {
    const fetched = await consumer.fetch({ max_messages: batch, expires: 1_000 });
    const running = [];
    for await (const m of fetched) {
      running.push(
        handler(m).then(() => {
          m.ack();
          done++;
        }),
      );
    }
    await Promise.all(running);
  }
}

async function permits(consumer, handler) {
  const c = consumeWithPermits({ consumer, limit: batch, batch, expiresMs: 1_000, handler });
  await new Promise((resolve) => {
    c.onSettle(() => {
      if (c.counts.acked === messages) resolve();
    });
  });
  await c.stop();
}

const peers = { handWritten, consumeWithPermits: permits };
const results = {};
for (const [hname, handler] of Object.entries(handlers)) {
  results[hname] = { handWritten: [], consumeWithPermits: [] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? Object.keys(peers) : Object.keys(peers).reverse();
    for (const peer of order) {
      const { name, consumer } = await filled();
      const t0 = performance.now();
      await peers[peer](consumer, handler);
      const s = (performance.now() - t0) / 1000;
      results[hname][peer].push(messages / s);
      await jsm.streams.delete(name);
    }
  }
}
await nc.close();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = Object.fromEntries(
  Object.entries(results).map(([h, r]) => {
    const hw = median(r.handWritten);
    const cp = median(r.consumeWithPermits);
    return [h, { handWritten: Math.round(hw), consumeWithPermits: Math.round(cp), ratio: cp / hw }];
  }),
);
if (values.json) console.log(JSON.stringify({ messages, rounds, batch, summary, results }));
else {
  console.log(`NATS JetStream, ${messages} messages, batch ${batch}, median of ${rounds} rounds`);
  for (const [h, s] of Object.entries(summary)) {
    console.log(
      `  handler ${h.padEnd(4)}  hand-written ${String(s.handWritten).padStart(7)}/s  ` +
        `consumeWithPermits ${String(s.consumeWithPermits).padStart(7)}/s  ratio ${s.ratio.toFixed(3)}`,
    );
  }
}
