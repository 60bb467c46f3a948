/**
 * A Redis Streams consumer that takes only what it can finish, for the broker scenario: one
 * `XREADGROUP … COUNT n` at a time on a connection of its own, `n` being the free permits, so
 * the group never hands it more than it can start and the backlog stays in the stream, where
 * `redisStreamLag` sees it. Each entry is acknowledged (`XACK`) when its handler resolves; one
 * that fails stays pending.
 *
 * @module
 */
import type { LineConsumer, LineHandler } from './broker-port.js';
import type { RedisConnection } from './redis-connection.js';

/** How long one read blocks waiting for entries, in ms: also how long `stop` may wait for it. */
const blockMs = 100;
/** Reads failing in a row before the consumer gives up. */
const maxFailures = 5;

/** Options of {@link redisStreamConsumer}. */
export interface RedisStreamConsumerOptions {
  /** A connection of its own: a blocking read holds it. */
  readonly reader: RedisConnection;
  /** Where acknowledgements go. */
  readonly acker: RedisConnection;
  readonly stream: string;
  readonly group: string;
  readonly permits: number;
  readonly handler: LineHandler;
}

/**
 * The entries of an `XREADGROUP` reply for one stream: `[id, body]` pairs. RESP2 answers
 * `[[stream, entries]]`; over RESP3 the reply is a map, which ioredis 6 flattens to
 * `[stream, entries]`.
 */
export function entriesOf(reply: unknown): [string, string][] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  const pair = (Array.isArray(reply[0]) ? reply[0] : reply) as [unknown, unknown];
  const entries = pair[1];
  if (!Array.isArray(entries)) return [];
  const out: [string, string][] = [];
  for (const entry of entries as [unknown, unknown][]) {
    const [id, fields] = entry;
    // The body is the entry's one field's value.
    if (Array.isArray(fields) && fields.length >= 2) out.push([String(id), String(fields[1])]);
  }
  return out;
}

/** Starts consuming; `stop` ends the reads and waits for the running handlers. */
export function redisStreamConsumer(o: RedisStreamConsumerOptions): LineConsumer {
  let active = 0;
  let stopping = false;
  let wake: (() => void) | undefined;
  let drained: (() => void) | undefined;
  const settled = (): void => {
    active--;
    wake?.();
    if (active === 0) drained?.();
  };
  const start = (id: string, body: string): void => {
    active++;
    o.handler(body).then(
      () => {
        o.acker.send(['XACK', o.stream, o.group, id]).catch(() => undefined);
        settled();
      },
      () => settled(),
    );
  };
  const loop = async (): Promise<void> => {
    let failures = 0;
    while (!stopping) {
      const free = o.permits - active;
      if (free <= 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      let reply: unknown;
      try {
        reply = await o.reader.send([
          'XREADGROUP',
          'GROUP',
          o.group,
          'demo-consumer',
          'COUNT',
          free,
          'BLOCK',
          blockMs,
          'STREAMS',
          o.stream,
          '>',
        ]);
        failures = 0;
      } catch (error) {
        if (++failures >= maxFailures || stopping) throw error;
        await new Promise((resolve) => setTimeout(resolve, blockMs));
        continue;
      }
      for (const [id, body] of entriesOf(reply)) start(id, body);
    }
  };
  const done = loop();
  done.catch(() => undefined);
  return {
    async stop() {
      stopping = true;
      wake?.();
      await done.catch(() => undefined);
      if (active > 0) await new Promise<void>((resolve) => (drained = resolve));
    },
  };
}
