// `spillway/client` exports every error class a dependency throws, as the same object as
// `spillway`'s: each case below makes a dependency throw one, on a virtual clock with a
// fetch-compatible stand-in, and the error must be exactly the class this door exports by
// that name. A caller who imports only `spillway/client` can narrow every error it sees.
import { describe, expect, it } from 'vitest';
import * as core from '../index.js';
import { createVirtualClock } from '../testing/index.js';
import * as client from './index.js';

const url = 'http://x/';

/** A fetch that never answers, and rejects with its signal's reason when aborted. */
const hang: client.FetchLike = (_input, init) =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error));
  });

/** A fetch failing as undici does when nothing listens: the request never left. */
const refused: client.FetchLike = () =>
  Promise.reject(
    new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
        code: 'ECONNREFUSED',
      }),
    }),
  );

const answering =
  (status: number, headers: Record<string, string> = {}): client.FetchLike =>
  () =>
    Promise.resolve(new Response('x', { status, headers }));

/** A dependency with only the parts a case names. */
function bare(options: Partial<client.DependencyOptions> = {}): client.Dependency {
  return client.dependency({
    name: 'x',
    clock: createVirtualClock(),
    retry: false,
    breaker: false,
    throttle: false,
    fetch: hang,
    ...options,
  });
}

const caught = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** Each class, and how to make a dependency throw it. */
const cases: Record<string, () => unknown> = {
  SpillwayConfigError: () => {
    try {
      return client.dependency({ name: '' });
    } catch (error) {
      return error;
    }
  },
  SpillwayArgumentError: () => caught(bare().fetch(url, undefined, { deadline: -1 })),
  DeadlineExceededError: () => caught(bare().fetch(url, undefined, { deadline: 0 })),
  DependencyOverloadedError: () =>
    caught(bare({ fetch: answering(429, { 'retry-after': '1' }) }).fetch(url)),
  DependencyUnreachableError: () => caught(bare({ fetch: refused }).fetch(url)),
  RetryBudgetExhaustedError: () =>
    // One token: the first failure leaves none for a retry.
    caught(
      bare({ fetch: refused, retry: { maxAttempts: 3 }, budget: { maxTokens: 1 } }).fetch(url),
    ),
  CircuitOpenError: async () => {
    const dep = bare({
      fetch: answering(500),
      breaker: { trip: { kind: 'consecutive', failures: 1 } },
    });
    await dep.fetch(url);
    return caught(dep.fetch(url));
  },
  ThrottledError: async () => {
    const clock = createVirtualClock();
    const dep = bare({
      clock,
      fetch: answering(429),
      throttle: client.adaptiveThrottle({ clock, random: () => 0.4, minRequests: 0 }),
      throttleFirstAttempts: true,
    });
    await caught(dep.fetch(url));
    return caught(dep.fetch(url));
  },
  DependencyTimeoutError: async () => {
    const clock = createVirtualClock();
    const call = caught(bare({ clock, timeoutMs: 10 }).fetch(url));
    await clock.advance(10);
    return call;
  },
  QueueFullError: () => {
    const dep = bare({ limit: 1, maxQueue: 0 });
    void dep.fetch(url);
    return caught(dep.fetch(url));
  },
  RateLimitedError: async () => {
    // Paced at 1 a second: the second call would wait longer than maxQueueWaitMs allows.
    const dep = bare({ clock: createVirtualClock(), ratePerSec: 1, maxQueueWaitMs: 10 });
    void dep.fetch(url);
    return caught(dep.fetch(url));
  },
  WaitLineFullError: async () => {
    // Paced, with a line of one: the third call finds it full.
    const dep = bare({
      clock: createVirtualClock(),
      ratePerSec: 1,
      maxQueue: 1,
      maxQueueWaitMs: 10_000,
    });
    void dep.fetch(url);
    void dep.fetch(url);
    return caught(dep.fetch(url));
  },
  QueueTimeoutError: async () => {
    const clock = createVirtualClock();
    const dep = bare({ clock, limit: 1, maxQueue: 1, maxQueueWaitMs: 10 });
    void dep.fetch(url);
    const waiting = caught(dep.fetch(url));
    await clock.advance(10);
    return waiting;
  },
  ShedError: () => {
    const dep = bare({ limit: 1, maxQueue: 1 });
    void dep.fetch(url);
    const waiting = caught(dep.fetch(url, undefined, { criticality: 'sheddable' }));
    void dep.fetch(url, undefined, { criticality: 'critical' });
    return waiting;
  },
};

describe('spillway/client exports the errors a dependency throws', () => {
  for (const [name, cause] of Object.entries(cases)) {
    it(name, async () => {
      const exported = (client as Record<string, unknown>)[name];
      expect(exported, `spillway/client exports ${name}`).toBeTypeOf('function');
      expect(exported, 'the same object as spillway exports').toBe(
        (core as Record<string, unknown>)[name],
      );
      const error = (await cause()) as Error | undefined;
      expect(error?.constructor).toBe(exported);
    });
  }
});
