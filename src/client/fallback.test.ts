// retryOn (answers retried as failures) and fallback (a value instead of chosen failures):
// both off by default, both never for the caller's own doing. Unit tests on a virtual clock
// with scripted fetch stand-ins; the same against real sockets is in
// test/client/fallback.test.ts.
import { describe, expect, it } from 'vitest';
import {
  circuitBreaker,
  DeadlineExceededError,
  DependencyOverloadedError,
  retryBudget,
  SpillwayArgumentError,
  SpillwayConfigError,
} from '../index.js';
import { createVirtualClock, type VirtualClock } from '../testing/index.js';
import { dependency, type FetchLike } from './dependency.js';

/** A fetch answering `statuses` in turn (the last one from then on), noting bodies cancelled. */
function scripted(statuses: readonly number[], headers: Record<string, string> = {}) {
  const log = { sent: 0, cancelled: [] as number[], methods: [] as string[] };
  const fetch: FetchLike = (_input, init) => {
    const n = ++log.sent;
    log.methods.push(init?.method ?? 'GET');
    const status = statuses[Math.min(n, statuses.length) - 1]!;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        c.enqueue(new TextEncoder().encode(`answer ${n}`));
        c.close();
      },
      cancel: () => void log.cancelled.push(n),
    });
    return Promise.resolve(new Response(body, { status, headers }));
  };
  return { fetch, log };
}

/** Runs `call` to its end on `clock`, advancing time (at most a minute) as its retries need. */
async function settle<T>(clock: VirtualClock, call: Promise<T>): Promise<unknown> {
  let done = false;
  const ended = call.catch((e: unknown) => e).finally(() => (done = true));
  for (let ms = 0; !done && ms < 60_000; ms += 50) await clock.advance(50);
  return ended;
}

const quiet = { breaker: false, throttle: false } as const;

describe('retryOn', () => {
  it('is off by default: a 502 is the answer, at once', async () => {
    const clock = createVirtualClock();
    const { fetch, log } = scripted([502, 200]);
    const dep = dependency({ name: 'gw', clock, fetch });
    const res = (await settle(clock, dep.fetch('http://gw/'))) as Response;
    expect(res.status).toBe(502);
    expect(log.sent).toBe(1);
  });

  it('retries listed answers of an idempotent request, and drops their bodies', async () => {
    const clock = createVirtualClock();
    const { fetch, log } = scripted([502, 504, 200]);
    const dep = dependency({ name: 'gw', clock, fetch, retryOn: [502, 504] });
    const res = (await settle(clock, dep.fetch('http://gw/'))) as Response;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('answer 3');
    expect(log.sent).toBe(3);
    expect(log.cancelled).toEqual([1, 2]);
    expect(dep.active).toBe(0);
  });

  it('returns the last answer, whole, when the attempts run out', async () => {
    const clock = createVirtualClock();
    const { fetch, log } = scripted([502]);
    const dep = dependency({ name: 'gw', clock, fetch, retryOn: [502], ...quiet });
    const res = (await settle(clock, dep.fetch('http://gw/'))) as Response;
    expect(res.status).toBe(502);
    expect(await res.text()).toBe('answer 3');
    expect(log.sent).toBe(3);
    expect(log.cancelled).toEqual([1, 2]);
  });

  it('leaves a request that is not idempotent alone, unless the call says it is', async () => {
    const clock = createVirtualClock();
    const { fetch, log } = scripted([502, 200]);
    const dep = dependency({ name: 'gw', clock, fetch, retryOn: [502] });
    const post = (await settle(clock, dep.fetch('http://gw/', { method: 'POST' }))) as Response;
    expect(post.status).toBe(502);
    expect(log.sent).toBe(1);
    const keyed = (await settle(
      clock,
      dep.fetch('http://gw/', { method: 'POST', body: 'x' }, { idempotent: true }),
    )) as Response;
    expect(keyed.status).toBe(200);
    expect(log.sent).toBe(2); // the script's second answer is its 200
  });

  it('counts a retried answer as a failure, and stops within the budget', async () => {
    const clock = createVirtualClock();
    const { fetch, log } = scripted([502]);
    const budget = retryBudget({ maxTokens: 4, tokenRatio: 0.1 });
    const dep = dependency({ name: 'gw', clock, fetch, retryOn: [502], budget, ...quiet });
    const sent: number[] = [];
    for (let i = 0; i < 5; i++) {
      const before = log.sent;
      const res = (await settle(clock, dep.fetch('http://gw/'))) as Response;
      expect(res.status).toBe(502);
      sent.push(log.sent - before);
    }
    // 4 tokens, no retries at or below half: the first call retries once (4 → 3 after its
    // first failure, a retry, then 2: no more), and every later call is one attempt.
    expect(sent).toEqual([2, 1, 1, 1, 1]);
  });

  it("waits for the answer's Retry-After before retrying", async () => {
    const clock = createVirtualClock();
    const gw = scripted([502, 200], { 'retry-after': '2' });
    const dep = dependency({ name: 'gw', clock, fetch: gw.fetch, retryOn: [502], ...quiet });
    const call = dep.fetch('http://gw/');
    await clock.advance(1_999);
    expect(gw.log.sent).toBe(1);
    await clock.advance(2_000);
    expect(gw.log.sent).toBe(2);
    expect((await call).status).toBe(200);
  });

  it('returns the last answer when no retry fits the deadline', async () => {
    const clock = createVirtualClock();
    const gw = scripted([502, 200], { 'retry-after': '5' });
    const dep = dependency({ name: 'gw', clock, fetch: gw.fetch, retryOn: [502], ...quiet });
    const res = (await settle(
      clock,
      dep.fetch('http://gw/', undefined, { deadline: 1_000 }),
    )) as Response;
    expect(res.status).toBe(502);
    expect(gw.log.sent).toBe(1);
    expect(gw.log.cancelled).toEqual([]);
  });

  it('rejects with the reason, the held body cancelled, when the caller gives up meanwhile', async () => {
    const clock = createVirtualClock();
    const gw = scripted([502, 200], { 'retry-after': '5' });
    const dep = dependency({ name: 'gw', clock, fetch: gw.fetch, retryOn: [502], ...quiet });
    const controller = new AbortController();
    const ended = dep
      .fetch('http://gw/', undefined, { signal: controller.signal })
      .catch((e: unknown) => e);
    await clock.advance(1_000);
    controller.abort(new Error('gone'));
    expect(await ended).toMatchObject({ message: 'gone' });
    await clock.advance(10_000);
    expect(gw.log.sent).toBe(1);
  });

  it('takes 4xx statuses too (408, 425)', async () => {
    const clock = createVirtualClock();
    const { fetch, log } = scripted([408, 425, 200]);
    const dep = dependency({ name: 'gw', clock, fetch, retryOn: [408, 425] });
    expect(((await settle(clock, dep.fetch('http://gw/'))) as Response).status).toBe(200);
    expect(log.sent).toBe(3);
  });

  it('fails at construction on what cannot be right', () => {
    for (const retryOn of [[200], [502.5], ['502'], Array.from({ length: 17 }, () => 502), 502]) {
      expect(() => dependency({ name: 'x', retryOn: retryOn as never })).toThrow('`retryOn`');
    }
    expect(() => dependency({ name: 'x', retryOn: [502], retry: false })).toThrow(
      SpillwayConfigError,
    );
  });
});

describe('fallback', () => {
  it('answers the failures it is on with its value, given the error', async () => {
    const clock = createVirtualClock();
    const { fetch } = scripted([429]);
    const seen: unknown[] = [];
    const dep = dependency({
      name: 'recs',
      clock,
      fetch,
      retry: false,
      fallback: {
        on: ['SPILLWAY_E_OVERLOADED'],
        value: (error) => {
          seen.push(error);
          return Response.json([]);
        },
      },
    });
    const res = (await settle(clock, dep.fetch('http://recs/'))) as Response;
    expect(await res.json()).toEqual([]);
    expect(seen[0]).toBeInstanceOf(DependencyOverloadedError);
  });

  it('passes up the failures it is not on', async () => {
    const clock = createVirtualClock();
    const { fetch } = scripted([429]);
    const dep = dependency({
      name: 'recs',
      clock,
      fetch,
      retry: false,
      fallback: { on: ['SPILLWAY_E_CIRCUIT_OPEN'], value: () => Response.json([]) },
    });
    expect(await settle(clock, dep.fetch('http://recs/'))).toBeInstanceOf(
      DependencyOverloadedError,
    );
  });

  it('stands in for retries that ran out', async () => {
    const clock = createVirtualClock();
    const errors: unknown[] = [];
    const dep = dependency({
      name: 'recs',
      clock,
      fetch: scripted([503]).fetch,
      ...quiet,
      fallback: {
        on: ['SPILLWAY_E_OVERLOADED'],
        value: (error) => (errors.push(error), new Response('stale')),
      },
    });
    const res = (await settle(clock, dep.fetch('http://recs/'))) as Response;
    expect(await res.text()).toBe('stale');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'SPILLWAY_E_OVERLOADED', attempts: 3 });
  });

  it('stands in for an open breaker, which a failure just opened', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({ clock, trip: { kind: 'consecutive', failures: 1 } });
    const dep = dependency({
      name: 'recs',
      clock,
      fetch: scripted([503]).fetch,
      breaker,
      retry: false,
      fallback: { on: ['SPILLWAY_E_CIRCUIT_OPEN'], value: () => new Response('stale') },
    });
    expect(await settle(clock, dep.fetch('http://recs/'))).toBeInstanceOf(
      DependencyOverloadedError,
    );
    expect(breaker.state).toBe('open');
    const res = (await settle(clock, dep.fetch('http://recs/'))) as Response;
    expect(await res.text()).toBe('stale');
  });

  it("is never asked about the caller's own doing, even by a predicate that takes everything", async () => {
    const clock = createVirtualClock();
    let asked = 0;
    const fallback = { on: () => (asked++, true), value: () => new Response('fallback') };
    const malformed = new TypeError('Request with GET/HEAD method cannot have body.');
    const dep = dependency({
      name: 'x',
      clock,
      fetch: () => Promise.reject(malformed),
      fallback,
    });
    expect(await settle(clock, dep.fetch('http://x/'))).toBe(malformed);
    const thrown = new RangeError('bad input');
    const inCall = dep.call(
      () => {
        throw thrown;
      },
      { fallback: () => 'fallback' },
    );
    expect(await settle(clock, inCall)).toBe(thrown);
    const controller = new AbortController();
    const hang = dependency({
      name: 'hang',
      clock,
      fetch: (_i, init) =>
        new Promise((_r, reject) =>
          init?.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error)),
        ),
      fallback,
    });
    const aborted = hang.fetch('http://x/', undefined, { signal: controller.signal });
    controller.abort(new Error('gone'));
    expect(await settle(clock, aborted)).toMatchObject({ message: 'gone' });
    const late = hang.fetch('http://x/', undefined, { deadline: 10 });
    expect(await settle(clock, late)).toBeInstanceOf(DeadlineExceededError);
    expect(asked).toBe(0);
  });

  it('takes a per-call answer for call(fn), or false for none', async () => {
    const clock = createVirtualClock();
    const db = dependency({
      name: 'db',
      clock,
      fallback: { on: (e) => e instanceof Error && e.message === 'down' },
    });
    const down = () => Promise.reject(new Error('down'));
    const cached: number[] = await db.call(down, { fallback: () => [1, 2] });
    expect(cached).toEqual([1, 2]);
    await expect(db.call(down)).rejects.toThrow('down'); // no value for call unless given
    await expect(db.call(down, { fallback: false })).rejects.toThrow('down');
    await expect(
      db.call(() => Promise.reject(new Error('other')), { fallback: () => [] }),
    ).rejects.toThrow('other');
  });

  it('passes up what its value throws', async () => {
    const clock = createVirtualClock();
    const broken = new Error('fallback broke');
    const dep = dependency({
      name: 'x',
      clock,
      fetch: scripted([429]).fetch,
      retry: false,
      fallback: {
        on: ['SPILLWAY_E_OVERLOADED'],
        value: () => {
          throw broken;
        },
      },
    });
    expect(await settle(clock, dep.fetch('http://x/'))).toBe(broken);
  });

  it('gives way to an answer retryOn held back', async () => {
    const clock = createVirtualClock();
    let asked = 0;
    const dep = dependency({
      name: 'gw',
      clock,
      fetch: scripted([502]).fetch,
      retryOn: [502],
      ...quiet,
      fallback: { on: () => (asked++, true), value: () => new Response('fallback') },
    });
    const res = (await settle(clock, dep.fetch('http://gw/'))) as Response;
    expect(res.status).toBe(502);
    expect(asked).toBe(0);
  });

  it('fails at construction, or at the call, on what cannot be right', async () => {
    for (const fallback of [
      null,
      {},
      { on: [] },
      { on: ['SPILLWAY_E_DEADLINE'] },
      { on: ['SPILLWAY_E_ABORTED'] },
      { on: 'SPILLWAY_E_OVERLOADED' },
      { on: ['SPILLWAY_E_OVERLOADED'], value: 'empty' },
    ]) {
      expect(() => dependency({ name: 'x', fallback: fallback as never })).toThrow(
        SpillwayConfigError,
      );
    }
    const plain = dependency({ name: 'x', clock: createVirtualClock() });
    await expect(plain.call(() => 1, { fallback: () => 2 })).rejects.toThrow(SpillwayArgumentError);
    await expect(plain.call(() => 1, { fallback: 'two' as never })).rejects.toThrow('`fallback`');
  });
});
