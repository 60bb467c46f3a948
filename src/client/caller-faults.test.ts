// What a caller does wrong, or chooses, never steers the protections a dependency shares with
// every other caller: its breaker, adaptive throttle, retry budget and cap. Unit tests on a
// virtual clock, with fetch-compatible stand-ins; the same against real sockets and undici's
// own argument errors is in test/client/caller-faults.test.ts.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  adaptiveThrottle,
  aimdLimit,
  circuitBreaker,
  DeadlineExceededError,
  DependencyTimeoutError,
  DependencyUnreachableError,
  retryBudget,
  type AdaptiveThrottle,
  type CircuitBreaker,
  type RetryBudget,
} from '../index.js';
import { createVirtualClock } from '../testing/index.js';
import { dependency, type Dependency, type FetchLike } from './dependency.js';

const ok: FetchLike = () => Promise.resolve(new Response('ok'));

/** A fetch that never answers, and rejects with its signal's reason when aborted. */
const hang: FetchLike = (_input, init) =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error));
  });

/** Everything a caller could have moved, read in one go. */
function protections(dep: Dependency) {
  return {
    active: dep.active,
    queued: dep.queued,
    breaker: dep.breaker?.toJSON().window,
    throttle: dep.throttle?.rejectProbability(),
    budget: dep.budget.available,
  };
}

describe('a fetch that resolves with something that is not a Response', () => {
  for (const [what, value] of [
    ['undefined', undefined],
    ['null', null],
    ['a plain object', { ok: true }],
    ['a number', 200],
  ] as const) {
    it(`(${what}) frees its slot and counts against nothing`, async () => {
      const clock = createVirtualClock();
      const dep = dependency({
        name: 'odd',
        limit: 2,
        clock,
        fetch: () => Promise.resolve(value as never),
      });
      const before = protections(dep);
      for (let i = 0; i < 30; i++) {
        await expect(dep.fetch('http://odd/')).rejects.toThrow(/not a Response/);
      }
      expect(protections(dep)).toEqual(before);
    });
  }
});

describe('user-supplied parts that throw never leak a slot', () => {
  const throwing = new Error('user code');
  const cases: [string, () => { breaker?: CircuitBreaker; budget?: RetryBudget }][] = [
    [
      'a breaker whose ticket throws on success',
      () => {
        const inner = circuitBreaker();
        return {
          breaker: {
            ...inner,
            toJSON: () => inner.toJSON(),
            tryAcquire: () => {
              const d = inner.tryAcquire();
              if (!d.ok) return d;
              return {
                ok: true,
                call: {
                  ...d.call,
                  success: () => {
                    throw throwing;
                  },
                },
              };
            },
          } as unknown as CircuitBreaker,
        };
      },
    ],
    [
      'a budget that throws on success',
      () => {
        const inner = retryBudget();
        return {
          budget: {
            policy: inner.policy,
            get available() {
              return inner.available;
            },
            recordRequest: () => inner.recordRequest(),
            recordSuccess: () => {
              throw throwing;
            },
            recordFailure: () => inner.recordFailure(),
            tryRetry: () => inner.tryRetry(),
            withdrawOnly: () => inner.withdrawOnly(),
            onExhausted: inner.onExhausted,
          },
        };
      },
    ],
  ];
  for (const [what, make] of cases) {
    it(what, async () => {
      const dep = dependency({
        name: 'x',
        limit: 1,
        clock: createVirtualClock(),
        fetch: ok,
        ...make(),
      });
      for (let i = 0; i < 5; i++) await expect(dep.fetch('http://x/')).rejects.toBe(throwing);
      expect(dep.active).toBe(0);
    });
  }
});

describe("the caller's own doing counts against nothing", () => {
  it('a call(fn) that throws at once', async () => {
    const dep = dependency({ name: 'x', clock: createVirtualClock() });
    const before = protections(dep);
    for (let i = 0; i < 50; i++) {
      await expect(
        dep.call(() => {
          throw new RangeError('bad argument');
        }),
      ).rejects.toThrow('bad argument');
    }
    expect(protections(dep)).toEqual(before);
    expect(await dep.call(() => 'fine')).toBe('fine');
  });

  it('a deadline that is not a time is refused before anything is taken', async () => {
    const dep = dependency({ name: 'x', clock: createVirtualClock(), fetch: ok });
    const before = protections(dep);
    for (const expiresAt of [NaN, 'soon', undefined]) {
      await expect(
        dep.fetch('http://x/', undefined, { deadline: { expiresAt } as never }),
      ).rejects.toThrow(/`deadline`/);
    }
    expect(protections(dep)).toEqual(before);
  });

  it("the caller's short deadline passing in flight: not a failure, not a drop", async () => {
    const clock = createVirtualClock();
    const limit = aimdLimit({ initialLimit: 20, minLimit: 1, maxLimit: 40 });
    // The dependency answers in 30 ms; the callers give it 5.
    const slow: FetchLike = (_input, init) =>
      new Promise((resolve, reject) => {
        const timer = clock.setTimer(30, () => resolve(new Response('late')));
        init?.signal?.addEventListener('abort', () => {
          clock.clearTimer(timer);
          reject(init.signal!.reason as Error);
        });
      });
    const dep = dependency({ name: 'slow', clock, fetch: slow, limit });
    const before = protections(dep);
    for (let i = 0; i < 40; i++) {
      const ended = dep.fetch('http://slow/', undefined, { deadline: 5 }).catch((e: unknown) => e);
      await clock.advance(5);
      expect(await ended).toBeInstanceOf(DeadlineExceededError);
    }
    expect(protections(dep)).toEqual(before);
    expect(limit.current).toBe(20);
  });

  it('the caller aborting in flight', async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'hang', clock, fetch: hang });
    const before = protections(dep);
    for (let i = 0; i < 40; i++) {
      const controller = new AbortController();
      const ended = dep
        .fetch('http://hang/', undefined, { signal: controller.signal })
        .catch((e: unknown) => e);
      await clock.advance(1);
      controller.abort(new Error('gone'));
      expect(await ended).toMatchObject({ message: 'gone' });
    }
    expect(protections(dep)).toEqual(before);
  });

  it("the dependency's own timeoutMs still counts: it was too slow", async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'hang', clock, fetch: hang, timeoutMs: 10, retry: false });
    const ended = dep.fetch('http://hang/').catch((e: unknown) => e);
    await clock.advance(10);
    expect(await ended).toBeInstanceOf(DependencyTimeoutError);
    expect(dep.breaker!.toJSON().window).toMatchObject({ calls: 1, failures: 1 });
    expect(dep.budget.available).toBeLessThan(10);
  });
});

/**
 * A breaker, a throttle and a budget passed in, each counting what it is told about outcomes:
 * the breaker's successes and failures (not its ignores), the throttle's accepts and refusals,
 * and the budget's requests, successes, failures and retries asked for.
 */
function watchedParts() {
  const heard: string[] = [];
  const clock = createVirtualClock();
  const innerBreaker = circuitBreaker({ clock });
  const breaker: CircuitBreaker = {
    get state() {
      return innerBreaker.state;
    },
    onStateChange: innerBreaker.onStateChange,
    toJSON: () => innerBreaker.toJSON(),
    run: (fn, o) => innerBreaker.run(fn, o),
    tryAcquire: () => {
      const d = innerBreaker.tryAcquire();
      if (!d.ok) return d;
      const call = d.call;
      return {
        ok: true,
        call: {
          success: () => (heard.push('breaker success'), call.success()),
          failure: () => (heard.push('breaker failure'), call.failure()),
          ignore: () => call.ignore(),
        },
      };
    },
  };
  const innerThrottle = adaptiveThrottle({ clock });
  const throttle: AdaptiveThrottle = {
    onReject: innerThrottle.onReject,
    tryRequest: (c) => innerThrottle.tryRequest(c),
    rejectProbability: (c) => innerThrottle.rejectProbability(c),
    recordAccept: (c) => (heard.push('throttle accept'), innerThrottle.recordAccept(c)),
    recordRefusal: (c) => (heard.push('throttle refusal'), innerThrottle.recordRefusal(c)),
  };
  const innerBudget = retryBudget({ policy: 'ratio', clock });
  const budget: RetryBudget = {
    policy: innerBudget.policy,
    get available() {
      return innerBudget.available;
    },
    recordRequest: () => (heard.push('budget request'), innerBudget.recordRequest()),
    recordSuccess: () => (heard.push('budget success'), innerBudget.recordSuccess()),
    recordFailure: () => (heard.push('budget failure'), innerBudget.recordFailure()),
    tryRetry: () => (heard.push('budget retry'), innerBudget.tryRetry()),
    withdrawOnly: () => innerBudget.withdrawOnly(),
    onExhausted: innerBudget.onExhausted,
  };
  return { heard, clock, parts: { breaker, throttle, budget, throttleFirstAttempts: true } };
}

describe("the caller's mistakes reach it as they are, and no shared part hears of them", () => {
  /** Errors a fetch raises for a malformed request, as undici words them. */
  const argumentErrors = [
    new TypeError('Headers.append: "a\nb" is an invalid header value.'),
    new TypeError('Request with GET/HEAD method cannot have body.'),
    new TypeError('Failed to parse URL from not a url'),
  ];
  for (const error of argumentErrors) {
    for (const how of ['rejects with', 'throws'] as const) {
      it(`a fetch that ${how} ${JSON.stringify(error.message.slice(0, 24))}…`, async () => {
        const { heard, clock, parts } = watchedParts();
        let sent = 0;
        const fetch: FetchLike = () => {
          sent++;
          if (how === 'throws') throw error;
          return Promise.reject(error);
        };
        const dep = dependency({ name: 'x', clock, fetch, ...parts });
        const before = protections(dep);
        for (let i = 0; i < 20; i++) {
          // GET is idempotent: a retry would be allowed, were this the dependency's failure.
          await expect(dep.fetch('http://x/')).rejects.toBe(error);
        }
        expect(sent).toBe(20); // one attempt each, never retried
        expect(heard).toEqual([]);
        expect(protections(dep)).toEqual(before);
      });
    }
  }

  it("a call's synchronous throw, even one that looks like an overload signal", async () => {
    const { heard, clock, parts } = watchedParts();
    const dep = dependency({ name: 'x', clock, ...parts });
    const before = protections(dep);
    let runs = 0;
    for (const thrown of [
      new RangeError('bad argument'),
      Object.assign(new Error('looks like a 503'), { status: 503 }),
      Object.assign(new Error('looks like a refusal'), { signal: 'later', retryAfterMs: 10 }),
    ]) {
      const ended = dep
        .call(
          () => {
            runs++;
            throw thrown;
          },
          { idempotent: true },
        )
        .catch((e: unknown) => e);
      await clock.advance(10_000); // time for retries, were any made
      expect(await ended).toBe(thrown);
    }
    expect(runs).toBe(3);
    expect(heard).toEqual([]);
    expect(protections(dep)).toEqual(before);
  });

  it("while a network failure ('fetch failed') is the dependency's, and heard by each", async () => {
    const { heard, clock, parts } = watchedParts();
    const fetch: FetchLike = () =>
      Promise.reject(new TypeError('fetch failed', { cause: new Error('other side closed') }));
    const dep = dependency({ name: 'x', clock, fetch, ...parts, retry: false });
    const error = await dep.fetch('http://x/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyUnreachableError);
    expect(heard).toEqual([
      'budget request',
      'breaker failure',
      'budget failure',
      'throttle refusal',
    ]);
  });
});

describe('joined caller signals', () => {
  it('leave no listener on a long-lived signal once the call has settled', async () => {
    const process = new AbortController().signal; // lives as long as the process
    const dep = dependency({ name: 'x', clock: createVirtualClock(), fetch: ok });
    for (let i = 0; i < 100; i++) {
      const mine = new AbortController();
      await dep.fetch('http://x/', { signal: mine.signal }, { signal: process });
    }
    await dep
      .call(() => Promise.reject(new Error('no')), {
        signal: process,
        deadline: { expiresAt: 1e9, signal: new AbortController().signal },
      })
      .catch(() => undefined);
    expect(getEventListeners(process, 'abort')).toHaveLength(0);
  });

  it('abort the call when any of them aborts, with its reason', async () => {
    const clock = createVirtualClock();
    const dep = dependency({ name: 'x', clock, fetch: hang });
    const a = new AbortController();
    const b = new AbortController();
    const ended = dep
      .fetch('http://x/', { signal: a.signal }, { signal: b.signal })
      .catch((e: unknown) => e);
    await clock.advance(1);
    b.abort(new Error('b went away'));
    expect(await ended).toMatchObject({ message: 'b went away' });
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
  });
});
