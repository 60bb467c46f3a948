import { configDefaults, defineConfig } from 'vitest/config';

// Unit tests sit beside the code (src/**); tests needing sockets, Redis or brokers live in test/.
// The files that put real load on the machine (the demo's scenarios, the load generator's rate
// and lag checks) judge what a server achieves on 2 cores: run beside each other or beside the
// rest of the suite, they starve each other and fail for the machine's sake, not the code's.
// So they run last, one file at a time, after every other file has finished. The event-loop
// monitor's tests join them: they time a real event loop in 50 ms samples, and a neighbour
// busy on both cores made one read "saturated" after the busy spell had ended.
const loadFiles = [
  'test/cli/demo*.test.ts',
  // Runs a demo's warm-up before it stops it: load, kept away from timing-sensitive tests.
  'test/cli/cleanup.test.ts',
  // Sends 500 req/s for 2 × 2 s, as the README's load example does.
  'test/readme-load.test.ts',
  'test/load/generator.test.ts',
  'src/node/event-loop-monitor.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two files at a time (Vitest's default on 2 cores is one): most integration files wait on
    // sockets, Redis and timers rather than compute, so two at once take about 6 minutes instead
    // of 9.5; the load group below still runs alone, one file at a time.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit and integration',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...loadFiles],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'load',
          include: loadFiles,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
