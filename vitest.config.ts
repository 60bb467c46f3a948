import { defineConfig } from 'vitest/config';

// Unit tests sit beside the code (src/**); tests needing sockets, Redis or brokers live in test/.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
