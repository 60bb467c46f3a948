// What the client retries, against real servers: POST only when marked idempotent, never a
// `never`, a request that never left even when it is a POST; and what it surfaces upstream.
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { dependency, type FetchLike } from '../../src/client/index.js';
import { DependencyOverloadedError, DependencyUnreachableError } from '../../src/index.js';
import { refusalFromError, refusalResponse } from '../../src/http/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { settleWith, startServer, type TestServer } from './servers.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function always(status: number, headers: Record<string, string> = {}, body = 'busy') {
  const s = await startServer((_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  });
  servers.push(s);
  return s;
}

function client(url: string, clock = createVirtualClock()) {
  return {
    clock,
    dep: dependency({ name: 'svc', baseUrl: url, clock, breaker: false, throttle: false }),
  };
}

async function failure(p: Promise<unknown>, clock: { advance(ms: number): Promise<void> }) {
  return (await settleWith(p, clock).then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  )) as DependencyOverloadedError;
}

describe('what is retried', () => {
  it('POST is not retried unless marked idempotent; GET is', async () => {
    const s = await always(503);
    const { dep, clock } = client(s.url);
    const post = await failure(dep.fetch('/', { method: 'POST', body: 'x' }), clock);
    expect(s.seen).toHaveLength(1);
    expect(post).toBeInstanceOf(DependencyOverloadedError);
    expect(post).toMatchObject({
      signal: 'elsewhere',
      attempts: 1,
      status: 503,
      dependency: 'svc',
    });

    const marked = await failure(
      dep.fetch('/', { method: 'POST', body: 'x' }, { idempotent: true }),
      clock,
    );
    expect(s.seen).toHaveLength(4);
    expect(marked).toMatchObject({ attempts: 3, signal: 'elsewhere' });
    expect(marked.cause).toBeInstanceOf(DependencyOverloadedError);
    expect(s.seen.slice(1).map((r) => r.headers['spillway-attempt'])).toEqual(['1', '2', '3']);
    expect(s.seen.slice(1).every((r) => r.method === 'POST')).toBe(true);

    // The budget is half spent by now (10 tokens, 4 failures): a fresh client for the GET.
    const fresh = client(s.url);
    await failure(fresh.dep.fetch('/'), fresh.clock);
    expect(s.seen).toHaveLength(7);
    expect(s.seen.slice(4).every((r) => r.method === 'GET')).toBe(true);
  });

  it('a streamed body cannot be sent twice, so it gets one attempt', async () => {
    const s = await always(503);
    const { dep, clock } = client(s.url);
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('x'));
        c.close();
      },
    });
    await failure(dep.fetch('/', { method: 'PUT', body, duplex: 'half' }), clock);
    expect(s.seen).toHaveLength(1);
  });

  it('`never` is not retried, from the header or from the problem+json body', async () => {
    const s = await always(503, { 'spillway-retry': 'never' });
    const { dep, clock } = client(s.url);
    const e = await failure(dep.fetch('/'), clock);
    expect(s.seen).toHaveLength(1);
    expect(e.signal).toBe('never');

    const r = refusalResponse({ reason: 'deadline' });
    const headers: Record<string, string> = {};
    for (let i = 0; i < r.headers.length; i += 2) headers[r.headers[i]!] = r.headers[i + 1]!;
    delete headers['spillway-retry'];
    const bodyOnly = await always(503, headers, r.body);
    const second = client(bodyOnly.url);
    const e2 = await failure(second.dep.fetch('/'), second.clock);
    expect(bodyOnly.seen).toHaveLength(1);
    expect(e2.signal).toBe('never');
  });

  it('reads later + Retry-After from a Spillway refusal, and retries it', async () => {
    const r = refusalResponse({ reason: 'capacity', retryAfterMs: 1_500 });
    const s = await startServer((_req, res, n) => {
      if (n === 1) {
        res.writeHead(r.status, r.headers);
        res.end(r.body);
      } else res.end('ok');
    });
    servers.push(s);
    const { dep, clock } = client(s.url);
    const start = clock.now();
    const res = await settleWith(dep.fetch('/'), clock);
    expect(res.status).toBe(200);
    expect(clock.now() - start).toBeGreaterThanOrEqual(2_000); // Retry-After: 2 (1.5 s rounded up)
  });

  it('answers that are not refusals come back as responses, not retried', async () => {
    for (const status of [200, 404, 500, 502]) {
      const s = await always(status, {}, `status ${status}`);
      const { dep, clock } = client(s.url);
      const res = await settleWith(dep.fetch('/'), clock);
      expect(res.status).toBe(status);
      expect(await res.text()).toBe(`status ${status}`);
      expect(s.seen).toHaveLength(1);
    }
  });

  it('a request that never left (connection refused) is retried even when it is a POST', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    let calls = 0;
    const counting: FetchLike = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const clock = createVirtualClock();
    const dep = dependency({
      name: 'gone',
      baseUrl: `http://127.0.0.1:${port}`,
      fetch: counting,
      clock,
      breaker: false,
      throttle: false,
    });
    const e = await failure(dep.fetch('/', { method: 'POST', body: 'x' }), clock);
    expect(calls).toBe(3);
    expect(e.attempts).toBe(3);
    expect(e.cause).toBeInstanceOf(DependencyUnreachableError);
    expect((e.cause as DependencyUnreachableError).sent).toBe(false);
  });
});

describe('what the layer above is told (refusalFromError, as the HTTP guard maps it)', () => {
  it('a single refusal passes the callee’s signal up; retries below become never', async () => {
    const s = await always(503, { 'retry-after': '1' });
    const { dep, clock } = client(s.url);
    const once = await failure(dep.fetch('/', { method: 'POST' }), clock);
    expect(refusalFromError(once)).toMatchObject({ signal: 'later', retryAfterMs: 1_000 });
    const retried = await failure(dep.fetch('/'), clock);
    expect(retried.attempts).toBe(3);
    expect(refusalFromError(retried)).toMatchObject({ signal: 'never' });
  });

  it('an exhausted budget is never', async () => {
    const s = await always(503);
    const { dep, clock } = client(s.url);
    let last: unknown;
    for (let i = 0; i < 5; i++) last = await failure(dep.fetch('/'), clock);
    expect((last as { code: string }).code).toBe('SPILLWAY_E_RETRY_BUDGET');
    expect(refusalFromError(last)).toMatchObject({ signal: 'never' });
  });
});
