// One whole scenario in a process of its own, as one `spillway sim --scenario NAME` runs it: the
// JIT compiles as it goes and the heap grows from nothing. Prints `{ requests, actions, ms }`
// (the module's loading left out, as the CLI's own timing leaves it out). Started by
// bench/sim.js for each scenario's cold figure.
//
// Usage: node bench/lib/sim-cold.js chain|spike   (SPILLWAY_DIST=<dir> to load another build)
import { wholeScenario } from './sim-scenario.js';

const name = process.argv[2];
if (name !== 'chain' && name !== 'spike') {
  console.error(`usage: node bench/lib/sim-cold.js chain|spike (got ${name})`);
  process.exit(2);
}
const dist = process.env.SPILLWAY_DIST ?? new URL('../../dist', import.meta.url).pathname;
const lib = await import(`${dist}/sim/index.js`);
const t0 = performance.now();
const r = await wholeScenario(lib, name);
const ms = performance.now() - t0;
console.log(JSON.stringify({ requests: r.requests, actions: r.actions, ms }));
