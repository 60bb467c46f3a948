// Unit tests of dependency() on a virtual clock, with fetch-compatible functions standing in
// for the network (the real-server tests live in test/client/).
import { describe, expect, it } from 'vitest';
import {
  adaptiveThrottle,
  circuitBreaker,
  CircuitOpenError,
  DependencyOverloadedError,
  QueueFullError,
  ThrottledError,
  type Clock,
} from '../index.js';
import { refusalFromError } from '../http/index.js';
import { createVirtualClock } from '../testing/index.js';
import { dependency, type FetchLike } from './dependency.js';

/** A fetch answering with `status`, recording the headers it was sent. */
function answering(status: number, seen: Headers[] = []): FetchLike {
  return (_input, init) => {
    seen.push(new Headers(init?.headers));
    return Promise.resolve(new Response('x', { status }));
  };
}

/** A virtual clock (`base`) seen through `clock`, which counts its readings in `counted.reads`. */
function countingClock(): {
  base: ReturnType<typeof createVirtualClock>;
  clock: Clock;
  counted: { reads: number };
} {
  const base = createVirtualClock();
  const counted = { reads: 0 };
  // Each method passed on to the clock itself: it keeps its state in private fields.
  const clock: Clock = {
    now: () => {
      counted.reads++;
      return base.now();
    },
    wallNow: () => base.wallNow(),
    setTimer: (ms, fn, options) => base.setTimer(ms, fn, options),
    clearTimer: (handle) => base.clearTimer(handle),
    sleep: (ms, signal) => base.sleep(ms, signal),
    timeoutSignal: (ms) => base.timeoutSignal(ms),
  };
  return { base, clock, counted };
}

describe('dependency options', () => {
  it('are validated at construction, by name', () => {
    expect(() => dependency(undefined as never)).toThrow(/dependency options/);
    expect(() => dependency({ name: '' })).toThrow(/`name`/);
    expect(() => dependency({ name: 'x', limit: 0 })).toThrow(/`limit`/);
    expect(() => dependency({ name: 'x', maxQueue: -1 })).toThrow(/`maxQueue`/);
    expect(() => dependency({ name: 'x', retry: { maxAttempts: 6 } })).toThrow(
      /`retry.maxAttempts`/,
    );
    expect(() => dependency({ name: 'x', retry: 3 as never })).toThrow(/`retry`/);
    expect(() => dependency({ name: 'x', retry: { backoff: { baseMs: -1 } } })).toThrow(/`baseMs`/);
    expect(() => dependency({ name: 'x', budget: { maxTokens: -1 } })).toThrow(/`maxTokens`/);
    expect(() => dependency({ name: 'x', breaker: { openMs: 0 } })).toThrow(/`openMs`/);
    expect(() => dependency({ name: 'x', throttle: { k: 0 } })).toThrow(/`k`/);
    expect(() => dependency({ name: 'x', breaker: true as never })).toThrow(/`breaker`/);
    expect(() => dependency({ name: 'x', throttle: 2 as never })).toThrow(/`throttle`/);
    expect(() => dependency({ name: 'x', timeoutMs: 0 })).toThrow(/`timeoutMs`/);
    expect(() => dependency({ name: 'x', fetch: 'curl' as never })).toThrow(/`fetch`/);
    expect(() => dependency({ name: 'x', baseUrl: '/relative' })).toThrow(/`baseUrl`/);
    expect(() => dependency({ name: 'x', headerNames: { attempt: 'bad name' } })).toThrow(
      /`headerNames.attempt`/,
    );
  });

  it('per-call options are checked too', async () => {
    const dep = dependency({ name: 'x', fetch: answering(200) });
    await expect(
      dep.fetch('http://x/', undefined, { criticality: 'urgent' as never }),
    ).rejects.toThrow(/`criticality`/);
    await expect(dep.fetch('http://x/', undefined, { deadline: -1 })).rejects.toThrow(/`deadline`/);
    await expect(dep.fetch('http://x/', undefined, { deadline: {} as never })).rejects.toThrow(
      /`deadline`/,
    );
    await expect(dep.fetch('http://x/', undefined, { signal: {} as never })).rejects.toThrow(
      /`signal`/,
    );
    await expect(dep.call(5 as never)).rejects.toThrow(/`fn`/);
    await expect(dep.call(() => 1, 5 as never)).rejects.toThrow(/`options`/);
  });

  it('a call that cannot start rejects; it never throws', async () => {
    const dep = dependency({ name: 'x', fetch: answering(200), baseUrl: 'http://x' });
    const bad = [
      () => dep.fetch('http://[', undefined),
      () => dep.fetch('/', { method: 5 as never }),
      () => dep.fetch('/', undefined, 5 as never),
      () => dep.call(() => 1, null as never),
    ];
    for (const start of bad) {
      let started: Promise<unknown> | undefined;
      expect(() => (started = start())).not.toThrow();
      await expect(started).rejects.toBeInstanceOf(Error);
    }
    // Nothing was taken on the way: no slot held, no request counted.
    expect(dep.active).toBe(0);
    expect(dep.throttle!.rejectProbability()).toBe(0);
    expect((await dep.fetch('/')).status).toBe(200);
  });

  it('resolves string inputs against baseUrl as new URL(input, baseUrl) does', async () => {
    const targets: string[] = [];
    const recording: FetchLike = (input) => {
      targets.push(
        input instanceof Request ? input.url : input instanceof URL ? input.href : input,
      );
      return Promise.resolve(new Response('x'));
    };
    const dep = dependency({ name: 'x', fetch: recording, baseUrl: 'http://h:8080/api/v1/' });
    // Each twice in a row, then the first again: the last resolution is remembered.
    const inputs = ['/users?id=1', 'users/2', '../v2/x', 'http://other/z', '//cdn/y'];
    for (const input of [...inputs.flatMap((i) => [i, i]), inputs[0]!]) await dep.fetch(input);
    expect(targets).toEqual([
      ...[
        'http://h:8080/users?id=1',
        'http://h:8080/api/v1/users/2',
        'http://h:8080/api/v2/x',
        'http://other/z',
        'http://cdn/y',
      ].flatMap((t) => [t, t]),
      'http://h:8080/users?id=1',
    ]);
    const url = new URL('http://h/q');
    await dependency({ name: 'x', fetch: recording }).fetch(url);
    expect(targets.at(-1)).toBe('http://h/q');
  });

  it('uses configured field names', async () => {
    const seen: Headers[] = [];
    const dep = dependency({
      name: 'x',
      fetch: answering(200, seen),
      headerNames: { attempt: 'X-Try', criticality: 'x-priority' },
    });
    await dep.fetch('http://x/');
    expect(seen[0]!.get('x-try')).toBe('1');
    expect(seen[0]!.get('x-priority')).toBe('critical');
    expect(seen[0]!.get('spillway-attempt')).toBeNull();
  });
});

describe('local refusals never count against the dependency', () => {
  it('own cap: a full cap refuses at once and leaves breaker, budget and throttle untouched', async () => {
    const clock = createVirtualClock();
    let release: () => void = () => {};
    const hanging: FetchLike = () =>
      new Promise((resolve) => (release = () => resolve(new Response('late'))));
    const breaker = circuitBreaker({ clock, trip: { kind: 'consecutive', failures: 1 } });
    const throttle = adaptiveThrottle({ clock, random: () => 0 });
    const dep = dependency({
      name: 'x',
      fetch: hanging,
      limit: 1,
      maxQueue: 0,
      breaker,
      throttle,
      clock,
    });
    const first = dep.fetch('http://x/');
    await clock.flush();
    for (let i = 0; i < 20; i++) {
      const e = await dep.fetch('http://x/').catch((x: unknown) => x);
      expect(e).toBeInstanceOf(QueueFullError);
      expect(refusalFromError(e)).toMatchObject({ signal: 'later' });
    }
    expect(breaker.state).toBe('closed');
    expect(dep.budget.available).toBe(4);
    release();
    expect((await first).status).toBe(200);
    expect(dep.active).toBe(0);
    // One request, one accept: the twenty local refusals were never counted as requests.
    expect(throttle.rejectProbability()).toBe(0);
  });

  it('own breaker: an open breaker refuses without sending, and says when to come back', async () => {
    const clock = createVirtualClock();
    let calls = 0;
    // A bare 503 (no signal of overload: a proxy with no upstream, a server that is down).
    const down: FetchLike = () => {
      calls++;
      return Promise.resolve(new Response('no', { status: 503 }));
    };
    const dep = dependency({
      name: 'x',
      fetch: down,
      clock,
      throttle: false,
      retry: false,
      breaker: { trip: { kind: 'consecutive', failures: 3 }, openMs: 2_000 },
    });
    for (let i = 0; i < 3; i++) await dep.fetch('http://x/').catch(() => {});
    expect(dep.breaker!.state).toBe('open');
    const e = (await dep.fetch('http://x/').catch((x: unknown) => x)) as CircuitOpenError;
    expect(e).toBeInstanceOf(CircuitOpenError);
    expect(e).toMatchObject({ retryAfterMs: 2_000, dependency: 'x', signal: 'later' });
    expect(calls).toBe(3);
    expect(refusalFromError(e)).toMatchObject({ signal: 'later', retryAfterMs: 2_000 });
  });

  it('answers that are not refusals: a 5xx counts against the breaker, a 4xx does not', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({ clock, trip: { kind: 'consecutive', failures: 3 } });
    const statuses = [404, 400, 500, 404, 500, 200, 500, 502, 500];
    const opened: number[] = [];
    breaker.onStateChange((e) => {
      if (e.to === 'open') opened.push(n);
    });
    let n = 0;
    const dep = dependency({
      name: 'x',
      clock,
      breaker,
      throttle: false,
      retry: false,
      fetch: () => Promise.resolve(new Response('x', { status: statuses[n++]! })),
    });
    for (let i = 0; i < 5; i++) expect((await dep.fetch('http://x/')).status).toBe(statuses[i]);
    expect(breaker.state).toBe('closed');
    // A 4xx is the dependency answering well: it ends a run of failures as a 200 does.
    for (let i = 5; i < 8; i++) await dep.fetch('http://x/');
    expect(breaker.state).toBe('closed');
    await dep.fetch('http://x/');
    expect(opened).toEqual([9]); // 500, 502, 500 in a row
    expect(dep.active).toBe(0);
  });

  it('a call with a deadline reads the clock once to start and once to record', async () => {
    const { base, clock, counted } = countingClock();
    const dep = dependency({
      name: 'x',
      clock,
      fetch: () => Promise.resolve(new Response('x')),
    });
    // In ms: the deadline's reading is the attempt's, for its check, its timer and what is
    // left of it; then the breaker and throttle record the answer.
    counted.reads = 0;
    await dep.call(() => 'ok', { deadline: 500 });
    expect(counted.reads).toBe(2);
    // An absolute deadline: one reading for the attempt, one to record.
    counted.reads = 0;
    await dep.call(() => 'ok', { deadline: { expiresAt: base.now() + 500 } });
    expect(counted.reads).toBe(2);
    // A retry reads its own: the first attempt's reading is long past.
    let n = 0;
    counted.reads = 0;
    const second = dep.call(
      async () => {
        await Promise.resolve();
        if (n++ === 0) throw Object.assign(new Error('busy'), { status: 503 });
        return 'ok';
      },
      { deadline: 5_000, idempotent: true },
    );
    await base.advance(1_000);
    expect(await second).toBe('ok');
    expect(n).toBe(2);
    expect(counted.reads).toBeGreaterThan(2);
  });

  it('own breaker and throttle: one reading each way per call, the verdicts of a passed-in breaker', async () => {
    const { base, clock, counted } = countingClock();
    const statuses = [500, 404, 500, 500, 500, 200, 200];
    let n = 0;
    const dep = dependency({
      name: 'x',
      clock,
      retry: false,
      breaker: { trip: { kind: 'consecutive', failures: 3 }, openMs: 1_000 },
      fetch: () => Promise.resolve(new Response('x', { status: statuses[n++] ?? 200 })),
    });
    const released: string[] = [];
    counted.reads = 0;
    expect((await dep.fetch('http://x/')).status).toBe(500);
    // A first attempt passes no throttle: one reading, for breaker and throttle after it.
    expect(counted.reads).toBe(1);
    expect(dep.active).toBe(0);
    for (let i = 1; i < 4; i++) await dep.fetch('http://x/');
    expect(dep.breaker!.state).toBe('closed'); // the 404 broke the run: 500, 500 so far
    await dep.fetch('http://x/');
    expect(dep.breaker!.state).toBe('open');
    await expect(dep.fetch('http://x/')).rejects.toBeInstanceOf(CircuitOpenError);
    expect(n).toBe(5);
    await base.advance(1_000);
    // Half-open: the probe goes with a ticket, and its success closes the breaker.
    dep.limiter.onRelease((e) => released.push(e.outcome));
    expect((await dep.fetch('http://x/')).status).toBe(200);
    expect(dep.breaker!.state).toBe('closed');
    expect((await dep.fetch('http://x/')).status).toBe(200);
    expect(released).toEqual(['ok', 'ok']);
    expect(dep.throttle!.rejectProbability()).toBe(0);
    expect(dep.active).toBe(0);
  });

  it('own throttle: a dependency refusing everything is soon refused locally, with never', async () => {
    const clock = createVirtualClock();
    let calls = 0;
    const busy: FetchLike = () => {
      calls++;
      return Promise.resolve(new Response('no', { status: 429 }));
    };
    const dep = dependency({
      name: 'x',
      fetch: busy,
      clock,
      breaker: false,
      retry: false,
      throttle: adaptiveThrottle({ clock, random: () => 0.4, minRequests: 0 }),
      throttleFirstAttempts: true,
    });
    const errors: unknown[] = [];
    for (let i = 0; i < 100; i++)
      errors.push(await dep.fetch('http://x/').catch((x: unknown) => x));
    expect(calls).toBe(1); // p = 1/2 after the first refusal, then higher: every later roll loses
    expect(errors[0]).toBeInstanceOf(DependencyOverloadedError);
    expect(errors[1]).toBeInstanceOf(ThrottledError);
    expect(refusalFromError(errors[1])).toMatchObject({ signal: 'never' });
  });

  it('own throttle, by default: every first attempt goes, and the retries are what it refuses', async () => {
    const clock = createVirtualClock();
    let sent = 0;
    const busy: FetchLike = () => {
      sent++;
      return Promise.resolve(new Response('no', { status: 503, headers: { 'retry-after': '0' } }));
    };
    const dep = dependency({
      name: 'x',
      fetch: busy,
      clock,
      breaker: false,
      // A budget that never runs out, so only the throttle stands between a refusal and a retry.
      budget: { maxTokens: 1_000 },
      retry: { maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } },
      throttle: adaptiveThrottle({ clock, random: () => 0.4, minRequests: 0 }),
    });
    const errors: unknown[] = [];
    for (let i = 0; i < 50; i++) {
      const call = dep.fetch('http://x/').catch((x: unknown) => x);
      await clock.advance(10);
      errors.push(await call);
    }
    // After the first refusal p = 1/2, then higher, above every roll of 0.4: each call's first
    // attempt still goes, and its retry is refused here.
    expect(sent).toBe(50);
    expect(errors.every((e) => e instanceof ThrottledError)).toBe(true);
    // What the caller learns: the refusal the retry would have answered, not only "throttled".
    expect(errors[49]).toMatchObject({
      attempts: 1,
      status: 503,
      retryAfterMs: 0,
      signal: 'never',
    });
    expect((errors[49] as Error).message).toMatch(
      /before retrying x after 1 attempt.*the last: .*503/,
    );
    expect((errors[49] as Error).cause).toBeInstanceOf(DependencyOverloadedError);
    expect(dep.throttle!.rejectProbability()).toBeGreaterThan(0.5);
  });
});

describe('call(fn)', () => {
  it('is not retried unless marked idempotent, and retries errors that carry a signal', async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'db', clock, breaker: false, throttle: false });
    let n = 0;
    // Failing once it has run (a rejection): a throw before that would be the caller's own.
    const flaky = () => {
      n++;
      if (n % 2 === 1) {
        return Promise.reject(
          Object.assign(new Error('UNAVAILABLE'), { signal: 'elsewhere' as const }),
        );
      }
      return Promise.resolve('row');
    };
    await expect(dep.call(flaky)).rejects.toThrow('UNAVAILABLE');
    expect(n).toBe(1);
    n = 0;
    const run = dep.call(flaky, { idempotent: true });
    await clock.runAll();
    expect(await run).toBe('row');
    expect(n).toBe(2);
  });

  it('ordinary errors pass up unchanged and count as breaker failures', async () => {
    const clock = createVirtualClock();
    const breaker = circuitBreaker({ clock, trip: { kind: 'consecutive', failures: 2 } });
    const dep = dependency({ name: 'db', clock, breaker, throttle: false });
    const bug = new RangeError('bad row');
    for (let i = 0; i < 2; i++) {
      await expect(dep.call(() => Promise.reject(bug), { idempotent: true })).rejects.toBe(bug);
    }
    expect(breaker.state).toBe('open');
  });
});

describe('tuned options', () => {
  for (const breaker of [{ openMs: 10_000 }, { halfOpenProbes: 3 }, {}]) {
    it(`keep the documented breaker policy: ${JSON.stringify(breaker)} and 5 failures in 300 calls`, async () => {
      const clock = createVirtualClock();
      let n = 0;
      const fetch: FetchLike = () => {
        n++;
        return Promise.resolve(new Response('x', { status: n > 100 && n <= 105 ? 500 : 200 }));
      };
      const dep = dependency({ name: 'x', clock, fetch, breaker });
      const refused: unknown[] = [];
      for (let i = 0; i < 300; i++) {
        await dep.fetch('http://x/').catch((e: unknown) => refused.push(e));
        await clock.advance(10);
      }
      expect(refused).toEqual([]);
      expect(n).toBe(300);
      expect(dep.breaker!.toJSON().window).toMatchObject({ kind: 'time' });
    });
  }
});

describe("the callee's own word that it is overloaded", () => {
  const answering =
    (status: number, headers: Record<string, string> = {}): FetchLike =>
    () =>
      Promise.resolve(new Response('busy', { status, headers }));

  for (const [what, status, headers] of [
    ['429', 429, {}],
    ['503 with Retry-After', 503, { 'retry-after': '1' }],
    ['503 with Spillway-Retry: later', 503, { 'spillway-retry': 'later' }],
    ['503 with Spillway-Retry: elsewhere', 503, { 'spillway-retry': 'elsewhere' }],
  ] as const) {
    it(`(${what}) feeds the throttle and the budget, never the breaker`, async () => {
      const clock = createVirtualClock();
      const dep = dependency({ name: 'x', clock, retry: false, fetch: answering(status, headers) });
      for (let i = 0; i < 100; i++) {
        await dep.fetch('http://x/').catch(() => {});
        await clock.advance(10);
      }
      expect(dep.breaker!.state).toBe('closed');
      expect(dep.breaker!.toJSON().window).toMatchObject({ failures: 0 });
      expect(dep.throttle!.rejectProbability()).toBeGreaterThan(0.5);
      expect(dep.budget.available).toBe(0);
    });
  }

  it('a bare 503, with no signal at all, is a failure the breaker counts', async () => {
    const clock = createVirtualClock();
    const dep = dependency({
      name: 'x',
      clock,
      retry: false,
      throttle: false,
      fetch: answering(503),
    });
    for (let i = 0; i < 30; i++) {
      await dep.fetch('http://x/').catch(() => {});
      await clock.advance(10);
    }
    expect(dep.breaker!.state).toBe('open');
  });
});
