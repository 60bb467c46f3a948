// THE CHAIN: three real HTTP services A → B → C on loopback, the user calling A, C answering
// every request with 503. Naive clients (3 attempts at every layer, no budget) put 3³ = 27
// attempts on C per user request; Spillway clients (a budget per dependency, `never` passed up,
// one retrying layer) put about one. A and B run behind the HTTP guard (`spillway/node`) and
// call the next hop through `dependency()`; the guard passes C's overload up with its signal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependency, type DependencyOptions } from '../../src/client/index.js';
import { hop, startServer, type Handler, type TestServer } from './servers.js';

const servers: TestServer[] = [];
let c: TestServer;

beforeAll(async () => {
  c = await startServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end('C is down');
  });
  servers.push(c);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** 3 attempts on any 429/503, no budget, no backoff, no signals read: what most code does. */
async function naiveFetch(url: string): Promise<Response> {
  let res!: Response;
  for (let attempt = 1; attempt <= 3; attempt++) {
    res = await fetch(url);
    if (res.status !== 429 && res.status !== 503) return res;
    if (attempt < 3) await res.arrayBuffer();
  }
  return res;
}

function naiveHop(next: string): Handler {
  return async (_req, res) => {
    const r = await naiveFetch(next);
    res.writeHead(r.status, { 'content-type': 'text/plain' });
    res.end(await r.text());
  };
}

async function serve(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

/** Runs `requests` user requests, `concurrency` at a time; returns C's attempts per request. */
async function run(
  requests: number,
  concurrency: number,
  user: () => Promise<unknown>,
): Promise<number> {
  const before = c.seen.length;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next++;
        await user().catch(() => {});
      }
    }),
  );
  return (c.seen.length - before) / requests;
}

/** A → B → C with Spillway clients built from `options` at the user, A and B. */
async function spillwayChain(options: Partial<DependencyOptions>) {
  const toC = dependency({ ...options, name: 'C', baseUrl: c.url });
  const b = await serve(hop(() => toC));
  const toB = dependency({ ...options, name: 'B', baseUrl: b.url });
  const a = await serve(hop(() => toB));
  const toA = dependency({ ...options, name: 'A', baseUrl: a.url });
  return { a, b, toA, toB, toC };
}

describe('the chain A → B → C, C answering 503 to everything', () => {
  it('naive clients put 27 attempts on C per user request; Spillway clients put ≤ 1.2', async () => {
    const nb = await serve(naiveHop(c.url));
    const na = await serve(naiveHop(nb.url));
    const naive = await run(10, 5, () => naiveFetch(na.url).then((r) => r.text()));

    // Spillway with nothing but the budget and `never` (breaker and throttle off).
    const budgetOnly = await spillwayChain({ breaker: false, throttle: false });
    const withBudget = await run(300, 8, () =>
      budgetOnly.toA.fetch('/', undefined, { deadline: 5_000 }),
    );

    // Spillway with its defaults (budget, `never`, breaker, adaptive throttle).
    const defaults = await spillwayChain({});
    const withDefaults = await run(300, 8, () =>
      defaults.toA.fetch('/', undefined, { deadline: 5_000 }),
    );

    console.log(
      [
        'retry amplification at C (attempts per user request):',
        `  naive clients, 3 attempts per layer, no budget:  ${naive.toFixed(2)}  (10 user requests)`,
        `  spillway, budget + never only:                   ${withBudget.toFixed(2)}  (300 user requests)`,
        `  spillway defaults (+ breaker, adaptive throttle): ${withDefaults.toFixed(2)}  (300 user requests)`,
      ].join('\n'),
    );
    expect(naive).toBe(27);
    expect(withBudget).toBeLessThanOrEqual(1.2);
    expect(withDefaults).toBeLessThanOrEqual(1.2);
    // One retrying layer: B (next to C) made the few retries; A and the user made none.
    expect(budgetOnly.b.seen.length).toBe(300);
    expect(budgetOnly.a.seen.length).toBe(300);
  });
});
