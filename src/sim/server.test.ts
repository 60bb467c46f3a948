import { describe, expect, it } from 'vitest';
import {
  carryBudget,
  concurrencyLimit,
  DependencyOverloadedError,
  retryBudget,
  retrySignals,
} from '../index.js';
import {
  defaultHeaderNames,
  refusalResponse,
  refusalTable,
  type Refusal,
  type RefusalReason,
} from '../http/index.js';
import { refusalOf } from '../client/response-signal.js';
import { answerOf, SimServer } from './server.js';
import { SimClock } from './sim-clock.js';

/** What the real client reads from the real guard's response to `refusal`. */
async function readByClient(refusal: Refusal) {
  const r = refusalResponse(refusal);
  const headers: [string, string][] = [];
  for (let i = 0; i < r.headers.length; i += 2) headers.push([r.headers[i]!, r.headers[i + 1]!]);
  const read = await refusalOf(new Response(r.body, { status: r.status, headers }), {
    names: defaultHeaderNames,
    wallNow: () => 0,
  });
  return { signal: read!.signal, retryAfterMs: read!.retryAfterMs };
}

/** Sends `request` to `s`; resolves with what the caller got (`undefined`: success). */
function send(s: SimServer, expiresAt = Infinity): Promise<Error | undefined> {
  return new Promise((resolve) => s.handle({ expiresAt, abandoned: false }, resolve));
}

function server(clock: SimClock, name = 's') {
  return new SimServer({
    name,
    clock,
    slots: { current: 1 },
    maxQueue: 0,
    sample: () => 100,
    guard: concurrencyLimit({ limit: 1, maxQueue: 0, clock }),
    bucketMs: 1_000,
    maxBuckets: 10,
  });
}

describe("a simulated server's refusals", () => {
  const reasons = (Object.keys(refusalTable) as RefusalReason[]).filter((r) => r !== 'failure');

  it('read as the real guard’s response reads at the real client, for every reason and wait', async () => {
    for (const reason of reasons) {
      for (const signal of [undefined, ...retrySignals]) {
        for (const retryAfterMs of [undefined, 0, 37, 999, 1_000, 1_001, 9_500, 12_345, 90_000]) {
          const refusal: Refusal = { reason, signal, retryAfterMs };
          expect({ refusal, ...answerOf(refusal) }).toEqual({
            refusal,
            ...(await readByClient(refusal)),
          });
        }
      }
    }
  });

  it("answer the guard's own refusals as the guard does: capacity `later` with its wait, a spent deadline `never`", async () => {
    const clock = new SimClock(100);
    const s = server(clock);
    const served = send(s);
    const full = send(s);
    const spent = send(s, 0);
    await clock.run(1_000);
    expect(await served).toBeUndefined();
    expect(await full).toMatchObject({ signal: 'later', retryAfterMs: 1_000, dependency: 's' });
    expect(await spent).toMatchObject({ signal: 'never', retryAfterMs: undefined });
    expect(await full).toBeInstanceOf(DependencyOverloadedError);
  });

  it('are made once per distinct answer and frozen, so no caller marks them', async () => {
    const clock = new SimClock(100);
    const s = server(clock);
    const served = send(s);
    const a = send(s);
    const b = send(s);
    await clock.run(1_000);
    expect(await served).toBeUndefined();
    const first = (await a)!;
    expect(await b).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    carryBudget(first, retryBudget());
    expect(Object.getOwnPropertySymbols(first)).toEqual([]);
    // A leaf's bare 503 carries no signal field: the client reads it as `elsewhere`.
    expect(s.refusalForAnswer()).toMatchObject({ signal: 'elsewhere', retryAfterMs: undefined });
  });
});
