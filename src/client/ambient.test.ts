// A call made inside a request's ambient context (runInContext, as the guards do) takes the
// request's deadline and criticality when it gives none; outside any, nothing changes. Unit
// tests on a virtual clock with a fetch that records what it was asked to send; the same
// through real guards and sockets is in test/client/ambient-context.test.ts.
import { describe, expect, it } from 'vitest';
import {
  DeadlineExceededError,
  outsideContext,
  runInContext,
  SpillwayConfigError,
  type AmbientContext,
} from '../index.js';
import { createVirtualClock, type VirtualClock } from '../testing/index.js';
import { dependency, type FetchLike } from './dependency.js';

/** A fetch that records the propagation fields of each request, and answers 200 at once. */
function recording(): { fetch: FetchLike; sent: Record<string, string>[] } {
  const sent: Record<string, string>[] = [];
  const fetch: FetchLike = (_input, init) => {
    const h = new Headers(init?.headers);
    const fields: Record<string, string> = {};
    for (const [k, v] of h) if (k.startsWith('spillway-')) fields[k] = v;
    sent.push(fields);
    return Promise.resolve(new Response('ok'));
  };
  return { fetch, sent };
}

/** A fetch that answers after `ms` on `clock`, or rejects with its signal's reason. */
function slow(clock: VirtualClock, ms: number): FetchLike {
  return (_input, init) =>
    new Promise((resolve, reject) => {
      const timer = clock.setTimer(ms, () => resolve(new Response('late')));
      init?.signal?.addEventListener('abort', () => {
        clock.clearTimer(timer);
        reject(init.signal!.reason as Error);
      });
    });
}

function request(clock: VirtualClock, fields: Partial<AmbientContext> = {}): AmbientContext {
  return { expiresAt: clock.now() + 800, clock, criticality: 'sheddable', attempt: 1, ...fields };
}

describe('a dependency inside a request', () => {
  it("sends the request's remaining deadline and criticality", async () => {
    const clock = createVirtualClock({ start: 5_000 });
    const { fetch, sent } = recording();
    const dep = dependency({ name: 'x', clock, fetch });
    const incoming = request(clock);
    await runInContext(incoming, async () => {
      await dep.fetch('http://x/');
      await clock.advance(300);
      await dep.fetch('http://x/');
    });
    expect(sent).toEqual([
      { 'spillway-criticality': 'sheddable', 'spillway-attempt': '1', 'spillway-deadline': '800' },
      { 'spillway-criticality': 'sheddable', 'spillway-attempt': '1', 'spillway-deadline': '500' },
    ]);
  });

  it('sends what it sent before outside any request', async () => {
    const clock = createVirtualClock();
    const { fetch, sent } = recording();
    const dep = dependency({ name: 'x', clock, fetch });
    await dep.fetch('http://x/');
    await runInContext(request(clock), () => outsideContext(() => dep.fetch('http://x/')));
    const today = { 'spillway-criticality': 'critical', 'spillway-attempt': '1' };
    expect(sent).toEqual([today, today]);
  });

  it("gives way to the call's own options, field by field", async () => {
    const clock = createVirtualClock();
    const { fetch, sent } = recording();
    const dep = dependency({ name: 'x', clock, fetch });
    await runInContext(request(clock), async () => {
      await dep.fetch('http://x/', undefined, { deadline: 100 });
      await dep.fetch('http://x/', undefined, { criticality: 'critical-plus' });
      await dep.fetch('http://x/', undefined, { signal: new AbortController().signal });
    });
    expect(sent.map((h) => [h['spillway-criticality'], h['spillway-deadline']])).toEqual([
      ['sheddable', '100'],
      ['critical-plus', '800'],
      ['sheddable', '800'],
    ]);
  });

  it('is ignored by a dependency made with ambientContext: false', async () => {
    const clock = createVirtualClock();
    const { fetch, sent } = recording();
    const dep = dependency({ name: 'x', clock, fetch, ambientContext: false });
    await runInContext(request(clock), () => dep.fetch('http://x/'));
    expect(sent).toEqual([{ 'spillway-criticality': 'critical', 'spillway-attempt': '1' }]);
    expect(() => dependency({ name: 'x', ambientContext: 'no' as never })).toThrow(
      SpillwayConfigError,
    );
  });

  it('reaches call(fn) too: its context, headers and remaining time', async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'db', clock });
    const seen = await runInContext(request(clock, { criticality: 'sheddable-plus' }), () =>
      dep.call(({ criticality, remainingMs, headers }) => ({ criticality, remainingMs, headers })),
    );
    expect(seen).toEqual({
      criticality: 'sheddable-plus',
      remainingMs: 800,
      headers: {
        'spillway-criticality': 'sheddable-plus',
        'spillway-attempt': '1',
        'spillway-deadline': '800',
      },
    });
  });

  it('builds the fields when the function reads them, as they stood when the attempt started', async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'db', clock });
    const read = runInContext(request(clock), () =>
      dep.call(async (ctx) => {
        await clock.sleep(300);
        return [ctx.headers, ctx.headers];
      }),
    );
    await clock.advance(300);
    const [first, again] = await read;
    expect(first).toMatchObject({ 'spillway-deadline': '800', 'spillway-attempt': '1' });
    expect(again).toBe(first);
  });

  it("stops a call in flight when the request's deadline passes: the caller's, counted nowhere", async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'x', clock, fetch: slow(clock, 2_000) });
    const before = { breaker: dep.breaker!.toJSON().window, budget: dep.budget.available };
    const ended = runInContext(request(clock), () => dep.fetch('http://x/')).catch(
      (e: unknown) => e,
    );
    await clock.advance(800);
    expect(await ended).toBeInstanceOf(DeadlineExceededError);
    expect({ breaker: dep.breaker!.toJSON().window, budget: dep.budget.available }).toEqual(before);
    expect(dep.active).toBe(0);
  });

  it("stops a call in flight when the request's signal aborts (its client left)", async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'x', clock, fetch: slow(clock, 2_000) });
    const left = new AbortController();
    const ended = runInContext(request(clock, { signal: left.signal }), () =>
      dep.fetch('http://x/'),
    ).catch((e: unknown) => e);
    await clock.advance(10);
    left.abort(new Error('client left'));
    expect(await ended).toMatchObject({ message: 'client left' });
    expect(dep.active).toBe(0);
  });

  it('refuses at once, sending nothing, once the request has no time left', async () => {
    const clock = createVirtualClock();
    const { fetch, sent } = recording();
    const dep = dependency({ name: 'x', clock, fetch });
    const incoming = request(clock);
    await clock.advance(800);
    const error = await runInContext(incoming, () => dep.fetch('http://x/')).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(sent).toEqual([]);
  });

  it("carries over what is left of a deadline on another clock, timed on the dependency's", async () => {
    const theirs = createVirtualClock({ start: 90_000 });
    const clock = createVirtualClock({ start: 10 });
    const dep = dependency({ name: 'x', clock, fetch: slow(clock, 2_000) });
    const { fetch, sent } = recording();
    const quick = dependency({ name: 'y', clock, fetch });
    const incoming = request(theirs); // expires at 90_800 on their clock: 800 ms from now
    await runInContext(incoming, () => quick.fetch('http://y/'));
    expect(sent[0]!['spillway-deadline']).toBe('800');
    const ended = runInContext(incoming, () => dep.fetch('http://x/')).catch((e: unknown) => e);
    await clock.advance(800);
    expect(await ended).toBeInstanceOf(DeadlineExceededError);
  });

  it('with no deadline (expiresAt: Infinity) sends only the criticality', async () => {
    const clock = createVirtualClock();
    const { fetch, sent } = recording();
    const dep = dependency({ name: 'x', clock, fetch });
    await runInContext(request(clock, { expiresAt: Infinity }), () => dep.fetch('http://x/'));
    expect(sent).toEqual([{ 'spillway-criticality': 'sheddable', 'spillway-attempt': '1' }]);
  });
});
