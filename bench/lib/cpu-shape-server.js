// A server of the CPU-bound shape (bench/cpu-shape.js): every admitted request spins the CPU for
// `serviceMs` inside its handler, as `spillway serve --work cpu` does, so what saturates is the
// event loop itself, not a pool of slots. `node bench/lib/cpu-shape-server.js <variant>
// <serviceMs>`; prints `listening on <port>`.
//   naive             node:http, no guard
//   bounded           the guard of `spillway serve bounded --work cpu` (10 slots, a line of 10
//                     and 50 ms, a 1 s deadline, the event-loop signal at its defaults), without
//                     its per-client quota (the load comes from one address)
//   bounded-no-loop   the same without the event-loop signal (`eventLoop: false`)
//   bounded-shed-all  the same refusing every request while the loop is saturated
//                     (`shedFrom: 'critical-plus'`, as @fastify/under-pressure does)
import { createServer } from 'node:http';

const [variant, serviceMsArg] = process.argv.slice(2);
const serviceMs = Number(serviceMsArg);
const dist = new URL('../../dist/', import.meta.url);
const { admission } = await import(new URL('node/index.js', dist).href);
const { boundedOptions } = await import(new URL('cli/serve/reference-options.js', dist).href);

const spin = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
const ok = (res) => res.writeHead(200, ['content-type', 'application/json']).end('{"ok":true}');

const reference = {
  ...boundedOptions({
    mode: 'bounded',
    framework: 'node',
    connections: 10,
    serviceMs,
    work: 'cpu',
    clientRatePerSec: 1e9,
    clientBurst: 1e9,
  }),
  quota: undefined,
};
const guards = {
  bounded: reference,
  'bounded-no-loop': { ...reference, eventLoop: false },
  'bounded-shed-all': { ...reference, eventLoop: { shedFrom: 'critical-plus' } },
};

let handler;
if (variant === 'naive') {
  handler = (_req, res) => {
    spin(serviceMs);
    ok(res);
  };
} else if (guards[variant] !== undefined) {
  handler = admission(guards[variant]).handle((_req, res) => {
    spin(serviceMs);
    ok(res);
  });
} else {
  console.error(`unknown variant '${variant}'; one of: naive, ${Object.keys(guards).join(', ')}`);
  process.exit(2);
}
// As `spillway serve` runs: Node's keep-alive timeout at 65 s.
const server = createServer({ keepAliveTimeout: 65_000 }, handler);
server.listen(0, '127.0.0.1', () => console.log(`listening on ${server.address().port}`));
