// Speed of `spillway/sim`: simulated requests (attempts reaching any simulated server) per
// second of wall time for the chain scenario's runs, the full metastable grid's wall time, and
// the event list on its own beside `spillway/testing`'s virtual clock (which flushes promise
// callbacks with setImmediate). Run after a build: `node bench/sim.js` (SPILLWAY_DIST=<dir>
// to use another build).
const dist = process.env.SPILLWAY_DIST ?? new URL('../dist', import.meta.url).pathname;
const lib = await import(`${dist}/sim/index.js`);
const { createVirtualClock } = await import(`${dist}/testing/index.js`);

async function chainRun(policy, overloaded) {
  const [user, ab, bc] = lib.chainPolicies[policy].hops;
  const hop = (name, to, retry) => ({
    name,
    slots: 10_000,
    maxQueue: 0,
    serviceTime: { kind: 'constant', ms: 0.5 },
    calls: [{ to, retry }],
  });
  const c = overloaded
    ? { name: 'C', slots: 10, maxQueue: 100, serviceTime: { kind: 'exponential', meanMs: 10 } }
    : {
        name: 'C',
        slots: 10_000,
        maxQueue: 0,
        serviceTime: { kind: 'constant', ms: 0.5 },
        answer: 'refuse',
      };
  const t0 = performance.now();
  const r = await lib.simulate({
    seed: 1,
    durationMs: overloaded ? 20_000 : 30_000,
    drainMs: 10_000,
    nodes: [hop('A', 'B', ab), hop('B', 'C', bc), c],
    clients: [
      {
        name: 'u',
        to: 'A',
        deadlineMs: overloaded ? 1_000 : 5_000,
        arrivals: { ratePerSec: overloaded ? 1_500 : 1_000 },
        retry: user,
      },
    ],
  });
  const ms = performance.now() - t0;
  const requests = Object.values(r.nodes).reduce((n, x) => n + x.received, 0);
  return { ms, requests, events: r.events };
}

console.log('chain runs (Poisson users; requests = attempts at A, B and C):');
for (const overloaded of [false, true]) {
  for (const policy of Object.keys(lib.chainPolicies)) {
    const { ms, requests, events } = await chainRun(policy, overloaded);
    console.log(
      `  ${overloaded ? 'C at 1.5x ' : 'C refusing'}  ${policy.padEnd(16)} ${String(requests).padStart(8)} requests  ${ms.toFixed(0).padStart(6)} ms  ${Math.round(
        (requests / ms) * 1000,
      )
        .toLocaleString('en')
        .padStart(9)} requests/s  ${Math.round((events / ms) * 1000)
        .toLocaleString('en')
        .padStart(9)} events/s`,
    );
  }
}

{
  const t0 = performance.now();
  await lib.metastableScenario({ seed: 1 });
  console.log(
    `metastable grid (4 policies x 8 x 8 cells): ${((performance.now() - t0) / 1000).toFixed(1)} s wall`,
  );
}

// The event list alone: N timers each queuing one promise callback.
async function bare(kind, n) {
  const t0 = performance.now();
  let fired = 0;
  if (kind === 'virtual') {
    const clock = createVirtualClock({ maxTimers: 10 });
    const f = () => {
      fired++;
      void Promise.resolve().then(() => {});
      if (fired < n) clock.setTimer(1, f);
    };
    clock.setTimer(1, f);
    await clock.advance(n + 1);
  } else {
    const r = await lib.simulate({
      durationMs: n,
      drainMs: 0,
      nodes: [{ name: 's', slots: 1, maxQueue: 0, serviceTime: { kind: 'constant', ms: 0.001 } }],
      clients: [
        {
          name: 'u',
          to: 's',
          deadlineMs: 10,
          arrivals: { ratePerSec: 1_000, process: 'constant' },
          retry: { kind: 'none' },
        },
      ],
    });
    fired = r.events;
  }
  return (fired / (performance.now() - t0)) * 1000;
}
console.log(
  `one request per event pair, sim: ${Math.round(await bare('sim', 200_000)).toLocaleString('en')} events/s`,
);
console.log(
  `bare timers, testing's virtual clock: ${Math.round(await bare('virtual', 200_000)).toLocaleString('en')} events/s`,
);
