// A `fetch` with no options and no signal takes a short path while the dependency's own
// breaker is closed and a slot is free (`Client.#plain` in dependency.ts). It must decide and
// record exactly what the whole path does: here the same scripted answers go through both — one
// dependency called as `fetch(path, init)`, its twin as `fetch(path, init, {})`, which always
// takes the whole path — and everything either side can see is compared after every call.
// Virtual clocks; fetch-compatible functions stand in for the network.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { criticalities, isSpillwayError } from '../index.js';
import { refusalFromError } from '../http/index.js';
import { createVirtualClock, type VirtualClock } from '../testing/index.js';
import { dependency, type Dependency, type FetchLike } from './dependency.js';

const outcomes = [200, 404, 500, 429, 'later', 'never', 'unsent', 'sent', 'throws'] as const;
type Outcome = (typeof outcomes)[number];

/** A fetch answering attempt by attempt from `script`, recording the fields each was sent. */
function scripted(script: readonly Outcome[]): { fetch: FetchLike; sent: string[] } {
  const sent: string[] = [];
  let n = 0;
  const fetch: FetchLike = (_input, init) => {
    const h = new Headers(init?.headers);
    const fields = ['attempt', 'criticality', 'deadline'].map((f) => h.get(`spillway-${f}`));
    sent.push([init?.method, h.get('x-caller'), ...fields].join());
    const outcome = script[n++ % script.length]!;
    switch (outcome) {
      case 'throws':
        throw new TypeError('invalid header value');
      case 'unsent':
        return Promise.reject(
          new TypeError('fetch failed', { cause: codeError('connect refused', 'ECONNREFUSED') }),
        );
      case 'sent':
        return Promise.reject(
          new TypeError('fetch failed', {
            cause: codeError('other side closed', 'UND_ERR_SOCKET'),
          }),
        );
      case 'later':
      case 'never':
        return Promise.resolve(
          new Response('busy', {
            status: 503,
            headers: { 'spillway-retry': outcome, 'retry-after': '1' },
          }),
        );
      default:
        return Promise.resolve(new Response('x', { status: outcome }));
    }
  };
  return { fetch, sent };
}

function codeError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

interface Side {
  readonly dep: Dependency;
  readonly clock: VirtualClock;
  readonly sent: string[];
}

/** What the short path's side met over all runs, so the test knows it covered the rare ways. */
const met = { throttled: 0, opened: 0, queued: 0 };

function side(script: readonly Outcome[], limit: number): Side {
  const clock = createVirtualClock();
  const { fetch, sent } = scripted(script);
  const dep = dependency({
    name: 'twin',
    baseUrl: 'http://twin.internal',
    fetch,
    clock,
    limit,
    maxQueue: 4,
    retry: { maxAttempts: 3, backoff: { baseMs: 50, random: () => 0.5 } },
    breaker: { trip: { kind: 'consecutive', failures: 4 }, openMs: 500, halfOpenProbes: 1 },
    throttle: { minRequests: 3, random: () => 0.6, windowMs: 10_000 },
  });
  dep.throttle!.onReject(() => met.throttled++);
  dep.breaker!.onStateChange((e) => {
    if (e.to === 'open') met.opened++;
  });
  return { dep, clock, sent };
}

/** The inits the calls are given, made afresh for each call. */
const inits = {
  none: () => undefined,
  post: () => ({ method: 'POST', body: 'x' }),
  headers: () => ({ headers: { 'X-Caller': 'a', 'Spillway-Attempt': '9' } }),
  'bad headers': () => ({ headers: [['bad name', 'x']] as [string, string][] }),
  stream: () => ({ method: 'PUT', body: new ReadableStream(), duplex: 'half' }),
  signal: () => ({ signal: new AbortController().signal }),
} satisfies Record<string, () => RequestInit | undefined>;

/** Runs `call` to its end on `clock`, and says how it ended. */
async function settle(call: Promise<Response>, clock: VirtualClock): Promise<string> {
  let ended: string | undefined;
  call.then(
    (r) => (ended = `answer ${r.status}`),
    (e: unknown) => {
      const refusal = isSpillwayError(e) ? refusalFromError(e) : undefined;
      const { name, message } = e as Error;
      ended = `${name} ${message} ${refusal?.signal} ${String(refusal?.retryAfterMs)}`;
    },
  );
  for (let i = 0; i < 1_000 && ended === undefined; i++) await clock.advance(10);
  return ended ?? 'never settled';
}

/** Everything a user can read of a dependency. */
function seen(s: Side): unknown {
  const { dep } = s;
  return {
    breaker: dep.breaker!.toJSON(),
    throttle: criticalities.map((c) => dep.throttle!.rejectProbability(c)),
    budget: dep.budget.available,
    active: dep.active,
    queued: dep.queued,
    sent: s.sent.length,
    now: s.clock.now(),
  };
}

describe('a fetch with no options and no signal', () => {
  it('decides and records as the whole path does, whatever the dependency answers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...outcomes), { minLength: 1, maxLength: 12 }),
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 3 }),
            fc.integer({ min: 0, max: 700 }),
            fc.integer({ min: 0, max: 9 }).map((n) => n === 0), // a bad path, one step in ten
            fc.constantFrom(...(Object.keys(inits) as (keyof typeof inits)[])),
          ),
          { minLength: 1, maxLength: 25 },
        ),
        async (script, steps) => {
          const plain = side(script, 2);
          const whole = side(script, 2);
          for (const [together, pauseMs, badPath, initKind] of steps) {
            // `together` calls at once: past the limit of 2, one waits in line. A bad path
            // fails before anything is taken or sent.
            const path = badPath ? 'http://[' : '/';
            const a = Array.from({ length: together }, () =>
              plain.dep.fetch(path, inits[initKind]()),
            );
            const b = Array.from({ length: together }, () =>
              whole.dep.fetch(path, inits[initKind](), {}),
            );
            if (plain.dep.queued > 0) met.queued++;
            for (const call of [...a, ...b]) call.catch(() => {}); // read in turn below
            const endsA = await Promise.all(a.map((call) => settle(call, plain.clock)));
            const endsB = await Promise.all(b.map((call) => settle(call, whole.clock)));
            expect(endsA).toEqual(endsB);
            expect(plain.sent).toEqual(whole.sent);
            expect(seen(plain)).toEqual(seen(whole));
            await plain.clock.advance(pauseMs);
            await whole.clock.advance(pauseMs);
          }
        },
      ),
      { numRuns: 60 },
    );
    // Both sides count alike; each rare way was met at least once.
    expect(met.throttled).toBeGreaterThan(0);
    expect(met.opened).toBeGreaterThan(0);
    expect(met.queued).toBeGreaterThan(0);
  });
});
