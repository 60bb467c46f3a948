// The RateStore conformance suite (conformance-suite.ts) against the machine's Redis (Valkey
// under `npm run test:valkey`), over each client flavour and over iovalkey, the ioredis fork
// Valkey publishes: the shared server for the ordinary cases, a private one killed before the
// run for the "store is down" cases (one per failure policy).
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
