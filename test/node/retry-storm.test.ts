// The retry-storm signal through a real guard, over real sockets, on a virtual clock (the
// histogram decays on the guard's clock, so nothing here waits on real time): with the route's
// only slot held, a spike of first tries is refused `later`; a storm of second and third
// attempts flips the route's refusals to `never` (the header, no Retry-After, and the body, as
// docs/http.md says) and publishes `entered` on `spillway:retry-storm`; once the storm has
// passed, refusals say `later` again and `left` is published. Then: a client's own refusals
// keep their signal in a storm, `retryStorm: false` turns it off, and every adapter gets it.
import { Agent, createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { refusalTable } from '../../src/http/index.js';
import { retryStormChannel, type RetryStormMessage } from '../../src/channels/index.js';
import { admission, type AdmissionOptions } from '../../src/node/index.js';
import { SpillwayConfigError } from '../../src/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, listen, send, until, type Answer } from '../helpers/http.js';
import { adapters, type Harness } from './adapter-harness.js';

const published: RetryStormMessage[] = [];
const listener = (message: RetryStormMessage): void => void published.push(message);
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  retryStormChannel.unsubscribe(listener);
  published.length = 0;
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A node:http guard whose only slot `/hold` takes until `release()`; anything else answers ok. */
async function holdingServer(options: AdmissionOptions) {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const guard = admission({ limit: 1, maxQueue: 0, penaltyBox: false, ...options });
  const server = createServer(
    guard.handle(async (req, res) => {
      if (req.url === '/hold') await held;
      res.end('ok');
    }),
  );
  const port = await listen(server);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const holding = send(port, { path: '/hold' });
  cleanup.push(async () => {
    release();
    await holding;
    agent.destroy();
    await close(server);
    guard.close();
  });
  await until(() => guard.inflight === 1);
  return {
    port,
    guard,
    /** Sends `n` requests of attempt `attempt` (none: no header), one after another. */
    async attempts(attempt: number | undefined, n: number): Promise<Answer[]> {
      const answers: Answer[] = [];
      const headers = attempt === undefined ? {} : { 'spillway-attempt': String(attempt) };
      for (let i = 0; i < n; i++) answers.push(await send(port, { headers, agent }));
      return answers;
    },
    async release(): Promise<void> {
      release();
      await holding;
    },
  };
}

const capacity = refusalTable.capacity;

/** A capacity refusal as docs/http.md says it is written, with `signal`. */
function expectCapacity(answer: Answer, signal: 'later' | 'never'): void {
  expect(answer.status).toBe(503);
  expect(answer.headers['content-type']).toBe('application/problem+json');
  expect(answer.headers['spillway-retry']).toBe(signal);
  if (signal === 'later') expect(answer.headers['retry-after']).toBe('1');
  else expect(answer.headers['retry-after']).toBeUndefined();
  const body = answer.json();
  expect(body).toEqual({
    type: capacity.type,
    title: capacity.title,
    status: 503,
    detail: capacity.detail,
    retryAfterMs: signal === 'later' ? body['retryAfterMs'] : null,
    spillwayRetry: signal,
  });
  if (signal === 'later') expect(body['retryAfterMs']).toBeGreaterThanOrEqual(1);
}

describe('the retry-storm signal on node:http', () => {
  it('a spike of first tries is refused later; a storm of retries flips refusals to never, and back once it passes', async () => {
    const clock = createVirtualClock();
    const s = await holdingServer({ clock, retryStorm: { minArrivals: 10 } });
    retryStormChannel.subscribe(listener);

    // A spike of first tries at a full route: refused, `later`, whatever their number.
    for (const answer of await s.attempts(undefined, 40)) expectCapacity(answer, 'later');
    expect(published).toEqual([]);

    // A storm: callers retry elsewhere, and their second and third attempts arrive here.
    const storm = [...(await s.attempts(2, 30)), ...(await s.attempts(3, 30))];
    const flipped = storm.findIndex((a) => a.headers['spillway-retry'] === 'never');
    // 41 first tries (the held request is one), then retries: the share passes one half at
    // the 42nd retry (42 of 83).
    expect(flipped).toBe(41);
    for (const answer of storm.slice(0, flipped)) expectCapacity(answer, 'later');
    for (const answer of storm.slice(flipped)) expectCapacity(answer, 'never');
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ route: 'default', state: 'entered' });
    expect(published[0]!.retryShare).toBeGreaterThan(0.5);
    expect(published[0]!.retryShare).toBeLessThan(0.52);
    expect(published[0]!.arrivals).toBeCloseTo(83, 6);
    // During the storm a first try is told to stop too: the pool is the problem.
    expectCapacity((await s.attempts(undefined, 1))[0]!, 'never');

    // Told `never`, callers stop retrying; a half-life later the share falls to 0.3 and the
    // route's refusals say `later` again.
    clock.advanceSync(2_000);
    const after = await s.attempts(undefined, 80);
    const back = after.findIndex((a) => a.headers['spillway-retry'] === 'later');
    expect(back).toBeGreaterThan(0);
    for (const answer of after.slice(0, back)) expectCapacity(answer, 'never');
    for (const answer of after.slice(back)) expectCapacity(answer, 'later');
    expect(published).toHaveLength(2);
    expect(published[1]).toMatchObject({ route: 'default', state: 'left' });
    expect(published[1]!.retryShare).toBeLessThanOrEqual(0.3);

    // Admitted work is untouched by it all.
    await s.release();
    expect((await send(s.port, { headers: { 'spillway-attempt': '3' } })).status).toBe(200);
  });

  it('a client’s own refusal keeps its signal in a storm', async () => {
    const clock = createVirtualClock();
    // Callers in a storm have quota to spare; `x-client: small` has a quota of one request.
    const small = (key: string): boolean => key === 'small';
    const s = await holdingServer({
      clock,
      retryStorm: { minArrivals: 5 },
      key: (req) => (req.headers['x-client'] === 'small' ? 'small' : undefined),
      quota: {
        ratePerSec: ({ key }) => (small(key) ? 0.001 : 1_000),
        burst: ({ key }) => (small(key) ? 1 : 1_000),
      },
    });
    await s.attempts(3, 20);
    expectCapacity((await s.attempts(3, 1))[0]!, 'never');
    // The small client's one request takes its quota and meets the full route: `never`.
    const headers = { 'spillway-attempt': '3', 'x-client': 'small' };
    expectCapacity(await send(s.port, { headers }), 'never');
    // Its quota spent, it is refused for that: its own doing, `later`, with its Retry-After.
    const refused = await send(s.port, { headers });
    expect(refused.status).toBe(429);
    expect(refused.headers['spillway-retry']).toBe('later');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // A spent deadline was `never` all along.
    const spent = await send(s.port, { headers: { 'spillway-deadline': '0' } });
    expect(spent.headers['spillway-retry']).toBe('never');
  });

  it('retryStorm: false keeps refusals as they are; a route may turn it off for itself', async () => {
    const clock = createVirtualClock();
    const off = await holdingServer({ clock, retryStorm: false });
    for (const answer of await off.attempts(3, 40)) expectCapacity(answer, 'later');
    // On for the guard, off for the route every request here takes.
    const routeOff = await holdingServer({
      clock,
      retryStorm: { minArrivals: 5 },
      routes: [{ match: '/*', retryStorm: false }],
    });
    for (const answer of await routeOff.attempts(3, 40)) expectCapacity(answer, 'later');
    const capacitySignal = await holdingServer({
      clock,
      capacitySignal: 'elsewhere',
      retryStorm: { minArrivals: 5 },
    });
    // `elsewhere` is what a storm must not say: another replica is just as full.
    const answers = await capacitySignal.attempts(2, 20);
    expect(answers[0]!.headers['spillway-retry']).toBe('elsewhere');
    expect(answers.at(-1)!.headers['spillway-retry']).toBe('never');
  });

  it('bad options fail at construction, naming the route, the option and the value', () => {
    expect(() => admission({ retryStorm: { retryShare: 1.5 } })).toThrow(SpillwayConfigError);
    expect(() => admission({ retryStorm: { retryShare: 1.5 } })).toThrow(
      'Expected `default.retryStorm.retryShare` to be a number above 0 and below 1, got 1.5 (number)',
    );
    expect(() => admission({ routes: [{ match: '/a', retryStorm: { halfLifeMs: 0 } }] })).toThrow(
      '`/a.retryStorm.halfLifeMs`',
    );
    expect(() => admission({ retryStorm: 'on' as never })).toThrow('`default.retryStorm`');
  });
});

describe.each(Object.keys(adapters) as (keyof typeof adapters)[])(
  'the retry-storm signal through %s',
  (name) => {
    it('a storm of retries at a full route is told never', async () => {
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const h: Harness = await adapters[name](
        {
          limit: 1,
          maxQueue: 0,
          penaltyBox: false,
          clock: createVirtualClock(),
          retryStorm: { minArrivals: 5 },
        },
        async (path) => {
          if (path === '/hold') await held;
          return 'ok';
        },
      );
      cleanup.push(() => h.stop());
      cleanup.push(release);
      const holding = send(h.port, { path: '/hold' });
      await until(() => h.inflight() === 1);
      const first = await send(h.port);
      expectCapacity(first, 'later');
      let last: Answer | undefined;
      for (let i = 0; i < 10; i++)
        last = await send(h.port, { headers: { 'spillway-attempt': '2' } });
      expectCapacity(last!, 'never');
      release();
      await holding;
    });
  },
);
