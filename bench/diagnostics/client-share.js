#!/usr/bin/env node
// A diagnostic of the caller's obligations under someone else's overload: what share of its
// calls a default dependency() gets served, beside a plain fetch client making the same calls,
// while other clients hold the callee at a multiple of its capacity. The callee is
// `spillway serve bounded` (10 connections × 30 ms = 333 req/s, refusing the excess with 503
// `later`); the others are `spillway load`, open loop; each of the two measured clients makes
// --rate calls per second with a 1 s deadline and its own x-client-id. It prints, per client,
// calls, ok, the share served, attempts sent and how the rest ended. Run with --throttle off
// or --throttle first to see what the adaptive throttle trades (docs/client.md, "Circuit
// breaker and adaptive throttle"): `on` is the default (the throttle refuses retries), `first`
// lets it refuse first attempts too (`throttleFirstAttempts`), `off` turns it off.
// Usage: node bench/diagnostics/client-share.js --help
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    load: { type: 'string', default: '3' },
    rate: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '20' },
    throttle: { type: 'string', default: 'on' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(`Usage: node bench/diagnostics/client-share.js [options]   (after npm run build)

  --load K        the other clients' load, in multiples of the callee's capacity (default 3)
  --rate N        calls per second of each measured client (default 20)
  --seconds S     how long the measured clients call (default 20)
  --throttle on|first|off   the dependency's adaptive throttle: on retries (the default),
                  on first attempts too, or off (default on)`);
  process.exit(0);
}
const load = Number(values.load);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
if (!(load > 0 && load <= 30) || !(rate > 0 && rate <= 1_000) || !(seconds > 0 && seconds <= 600)) {
  throw new Error('--load must be in (0, 30], --rate in (0, 1000], --seconds in (0, 600]');
}
if (!['on', 'first', 'off'].includes(values.throttle)) {
  throw new Error(`--throttle must be on, first or off, not ${values.throttle}`);
}

const dist = process.env.SPILLWAY_DIST ?? new URL('../../dist', import.meta.url).pathname;
const main = `${dist}/cli/main.js`;
const { dependency } = await import(`${dist}/client/index.js`);
const capacity = 10 / 0.03;

const server = spawn(process.execPath, [main, 'serve', 'bounded', '--port', '0'], {
  stdio: ['ignore', 'pipe', 'ignore'],
});
const port = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += String(d);
    const m = /listening on (\d+)/.exec(out);
    if (m !== null) resolve(Number(m[1]));
  });
  server.once('exit', () => reject(new Error('spillway serve exited before it listened')));
});
const url = `http://127.0.0.1:${port}`;
const others = spawn(
  process.execPath,
  [
    main,
    'load',
    `${url}/`,
    '--group',
    `others:${Math.round(load * capacity)}:clients=100:x-client-id=others{client}`,
    '--duration',
    `${seconds + 4}s`,
    '--deadline-ms',
    '1000',
  ],
  { stdio: 'ignore' },
);
const stop = () => {
  others.kill();
  server.kill();
};
process.once('SIGINT', () => {
  stop();
  process.exit(130);
});

try {
  await sleep(3_000); // the others' load reaches the callee first
  let attempts = 0;
  const counting = (input, init) => {
    attempts++;
    return fetch(input, init);
  };
  const dep = dependency({
    name: 'callee',
    baseUrl: url,
    fetch: counting,
    ...(values.throttle === 'off' ? { throttle: false } : {}),
    ...(values.throttle === 'first' ? { throttleFirstAttempts: true } : {}),
  });
  const spillway = { calls: 0, ok: 0, ended: {} };
  const plain = { calls: 0, ok: 0, ended: {} };
  const call = async (stats, fn) => {
    stats.calls++;
    try {
      const answer = await fn();
      await answer.arrayBuffer();
      if (answer.ok) stats.ok++;
      else stats.ended[answer.status] = (stats.ended[answer.status] ?? 0) + 1;
    } catch (error) {
      const key = error.code ?? error.name;
      stats.ended[key] = (stats.ended[key] ?? 0) + 1;
    }
  };
  const pending = [];
  const started = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = started + (i * 1_000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(
      call(spillway, () =>
        dep.fetch('/', { headers: { 'x-client-id': 'spillway' } }, { deadline: 1_000 }),
      ),
      call(plain, () =>
        fetch(`${url}/`, {
          headers: { 'x-client-id': 'plain' },
          signal: AbortSignal.timeout(1_000),
        }),
      ),
    );
  }
  await Promise.all(pending);
  const row = (name, s, sent) =>
    `| ${name} | ${s.calls} | ${s.ok} | ${(s.ok / s.calls).toFixed(3)} | ${sent} | ${JSON.stringify(s.ended)} |`;
  console.log(
    `Others at ${load} × capacity (${Math.round(load * capacity)} req/s); each client ${rate} calls/s for ${seconds} s; throttle ${values.throttle}; Node ${process.version}\n`,
  );
  console.log('| client | calls | ok | share | attempts | the rest |');
  console.log('|---|---:|---:|---:|---:|---|');
  console.log(row('dependency() defaults', spillway, attempts));
  console.log(row('plain fetch', plain, plain.calls));
  console.log(
    `\nbreaker ${dep.breaker?.state ?? 'off'}; throttle probability ${dep.throttle?.rejectProbability().toFixed(2) ?? 'off'}`,
  );
} finally {
  stop();
}
