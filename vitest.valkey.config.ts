import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:valkey`: test/redis (the cluster tests included) against a valkey-server that
// test/redis/valkey-setup.ts starts for the run. One project: the base's load group has no
// Redis test in it.
export default mergeConfig(
  { ...base, test: { ...base.test, projects: undefined } },
  defineConfig({
    test: {
      include: ['test/redis/**/*.test.ts'],
      globalSetup: ['test/redis/valkey-setup.ts'],
    },
  }),
);
