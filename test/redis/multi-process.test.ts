// The three-replica quota cases (multi-process-suite.ts) against the machine's Redis, the
// three processes over one client flavour at a time.
import { existsSync } from 'node:fs';
import { describe } from 'vitest';
import { threeReplicaQuotaCases } from './multi-process-suite.js';
import { connect, sharedPort, sharedRedisMissing } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const built = existsSync(`${root}dist/redis/index.js`);
const missing =
  (await sharedRedisMissing()) ??
  (built ? undefined : 'dist/redis is not built (run npm run build first)');
if (missing !== undefined) console.warn(`skipping multi-process Redis tests: ${missing}`);

// The current majors (mainFlavours), which the replica fixture speaks.
const flavours = ['ioredis6', 'node-redis6'] as const;

describe.skipIf(missing !== undefined).each(flavours)('3 processes over %s', (flavour) => {
  threeReplicaQuotaCases({
    label: flavour,
    flavours: [flavour, flavour, flavour],
    where: () => ({ port: sharedPort }),
    admin: () => connect(flavour),
    cleanup: true,
  });
});
