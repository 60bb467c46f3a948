// The simulated chain beside the real one: the same A → B → C over loopback HTTP (as in
// test/client/chain.test.ts, with the same helpers) and in `spillway/sim`, C refusing
// everything; attempts at C per user request must agree within 10 %. For the defaults (about 20
// attempts in 300: the breaker opens after 20 failures in both) 10 % is less than one request,
// and the real chain lets a few more through — the requests already in flight, up to 8 at a
// time, when it opens, where the simulated users arrive 10 ms apart (seen: 21 to 24 in 300) —
// so there the real figure must lie between the simulated one and 8 attempts above it.
import { afterAll, describe, expect, it } from 'vitest';
import { dependency, type DependencyOptions } from '../../src/client/index.js';
import { chainScenario } from '../../src/sim/index.js';
import { hop, startServer, type TestServer } from '../client/servers.js';

const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function realChain(options: Partial<DependencyOptions>, requests: number): Promise<number> {
  const c = await startServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end('C is down');
  });
  servers.push(c);
  const toC = dependency({ ...options, name: 'C', baseUrl: c.url });
  const b = await startServer(hop(() => toC));
  const toB = dependency({ ...options, name: 'B', baseUrl: b.url });
  const a = await startServer(hop(() => toB));
  servers.push(a, b);
  const toA = dependency({ ...options, name: 'A', baseUrl: a.url });
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < requests) {
        next++;
        await toA.fetch('/', undefined, { deadline: 5_000 }).catch(() => {});
      }
    }),
  );
  return c.seen.length / requests;
}

function agree(simulated: number, real: number): void {
  expect(Math.abs(simulated - real)).toBeLessThanOrEqual(0.1 * real);
}

function breakerAgrees(simulated: number, real: number, requests: number): void {
  expect(real).toBeGreaterThanOrEqual(simulated - 1 / requests);
  expect(real).toBeLessThanOrEqual(simulated + 8 / requests);
}

describe('the simulated chain agrees with the real HTTP chain', () => {
  it('budget + never, and Spillway defaults (naive is 27 in both by construction)', async () => {
    const sim = await chainScenario({
      seed: 1,
      policies: ['naive', 'budget', 'defaults'],
      overload: false,
    });
    const byPolicy = Object.fromEntries(sim.refusing.map((r) => [r.policy, r.attemptsAtC]));
    const budget = await realChain({ breaker: false, throttle: false }, 300);
    const defaults = await realChain({}, 300);
    console.log(
      `attempts at C per user request, simulated / real: budget ${byPolicy['budget']} / ${budget.toFixed(4)}, defaults ${byPolicy['defaults']} / ${defaults.toFixed(4)}, naive ${byPolicy['naive']} / 27 (test/client/chain.test.ts)`,
    );
    expect(byPolicy['naive']).toBe(27);
    agree(byPolicy['budget']!, budget);
    breakerAgrees(byPolicy['defaults']!, defaults, 300);
  }, 60_000);
});
