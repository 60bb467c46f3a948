// The RateStore conformance suite (conformance-suite.ts) against the machine's Redis, over
// each client flavour and over iovalkey, the ioredis fork Valkey publishes (Valkey the
// server is not packaged for this Debian, so the Valkey client is tested against Redis):
// the machine's Redis for the ordinary cases, a private redis-server killed before the run
// for the "store is down" cases (one per failure policy).
import { describe } from 'vitest';
import { redisStoreConformance } from './conformance-suite.js';
import {
  connect,
  flavours,
  PrivateRedis,
  redisServerMissing,
  sharedRedisMissing,
  type Flavour,
} from './helpers.js';

const missing = (await sharedRedisMissing()) ?? redisServerMissing();
if (missing !== undefined) console.warn(`skipping Redis conformance: ${missing}`);

const targets: readonly Flavour[] = [...flavours, 'iovalkey'];

describe.skipIf(missing !== undefined).each(targets)('redisStore over %s conforms', (flavour) => {
  redisStoreConformance({
    label: flavour,
    up: () => connect(flavour),
    down: async () => {
      const server = await PrivateRedis.start();
      try {
        const client = await connect(flavour, server.port);
        await server.kill();
        return { client, stop: async () => Promise.all([client.close(), server.stop()]).then() };
      } catch (error) {
        await server.stop();
        throw error;
      }
    },
    cleanup: true,
  });
});
