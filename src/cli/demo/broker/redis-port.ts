/**
 * The broker scenario on Redis Streams: each line is a stream of its own with one consumer
 * group. Redis has no TTL for stream entries, so the `ttl` way trims by age on every publish
 * (`XADD … MINID = now − ttl`): entries older than that are deleted, read or not. The lag is
 * `redisStreamLag` (`XINFO GROUPS`), the consumer a permit loop of `XREADGROUP COUNT free`.
 *
 * @module
 */
import type { RedisClientLike } from '../../../redis/index.js';
import { redisStreamLag } from '../../../redis/index.js';
import { maskedUrl, type BrokerLine, type BrokerPort } from './broker-port.js';
import { redisConnection } from './redis-connection.js';
import { redisStreamConsumer } from './redis-stream-consumer.js';

const group = 'workers';
/** A stream left behind by a run that was killed outright expires after this, in ms. */
const leftoverExpiresMs = 600_000;

/** Connects to Redis at `url` (`redis://host:port`). */
export async function redisPort(url: string): Promise<BrokerPort> {
  const main = await redisConnection(url);
  const readers = new Set<{ close(): void }>();
  return {
    name: 'redis',
    url: maskedUrl(url),
    async line({ name, ttlMs }): Promise<BrokerLine> {
      await main.send(['XGROUP', 'CREATE', name, group, '$', 'MKSTREAM']);
      await main.send(['PEXPIRE', name, leftoverExpiresMs]);
      return {
        where: `stream ${name} on ${maskedUrl(url)}`,
        async publish(body) {
          const trim = ttlMs === undefined ? [] : ['MINID', '=', Date.now() - ttlMs];
          await main.send(['XADD', name, ...trim, '*', 'body', body]);
        },
        readLag: redisStreamLag({ client: main.client as RedisClientLike, stream: name, group }),
        async consume({ permits, handler }) {
          const reader = await redisConnection(url);
          readers.add(reader);
          const consumer = redisStreamConsumer({
            reader,
            acker: main,
            stream: name,
            group,
            permits,
            handler,
          });
          return {
            async stop() {
              await consumer.stop();
              reader.close();
              readers.delete(reader);
            },
          };
        },
        async delete() {
          await main.send(['DEL', name]).catch(() => undefined);
        },
      };
    },
    close() {
      for (const reader of readers) reader.close();
      main.close();
      return Promise.resolve();
    },
  };
}
