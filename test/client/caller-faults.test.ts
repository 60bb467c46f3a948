// Hostile and careless callers against real servers on 127.0.0.1, through Node's own fetch:
// nothing a caller sends or chooses — a malformed request, a short deadline, a disconnect —
// may move the protections a dependency shares with every other caller (its breaker,
// adaptive throttle, retry budget and cap), and nothing may leave a slot taken.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependency, type Dependency } from '../../src/client/index.js';
import { DeadlineExceededError, DependencyUnreachableError } from '../../src/index.js';
import { admission } from '../../src/node/index.js';
import { startServer, type TestServer } from './servers.js';

let backend: TestServer;
beforeAll(async () => {
  // Loads undici before any deadline starts counting.
  await (await fetch('data:,warm')).text();
  backend = await startServer((req, res) => {
    const delay = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
    setTimeout(() => res.end('ok'), delay);
  });
});
afterAll(() => backend.close());

/** Everything a caller could have moved, read in one go. */
function protections(dep: Dependency) {
  return {
    active: dep.active,
    queued: dep.queued,
    breaker: dep.breaker?.toJSON(),
    throttle: dep.throttle?.rejectProbability(),
    budget: dep.budget.available,
  };
}

/** Requests undici refuses before sending anything, each as a caller could write it. */
const malformed: [string, RequestInit][] = [
  ['a header value with a line break', { headers: { 'x-name': 'a\nb' } }],
  ['a header name that is not a token', { headers: { 'bad name': 'x' } }],
  ['a GET with a body', { method: 'GET', body: 'x' }],
  ['the CONNECT method', { method: 'CONNECT' }],
  ['a method that is not a token', { method: 'GE T' }],
  ['headers as pairs of the wrong length', { headers: [['a']] as never }],
  ['a stream body without duplex', { method: 'POST', body: new ReadableStream() }],
];

describe("a caller's malformed request", () => {
  for (const [what, init] of malformed) {
    it(`(${what}) is passed up as it is, and moves nothing shared`, async () => {
      const dep = dependency({ name: 'backend', baseUrl: backend.url });
      const before = protections(dep);
      const seen = backend.seen.length;
      for (let i = 0; i < 30; i++) {
        const error = await dep.fetch('/', init).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).not.toBe('fetch failed');
      }
      expect(protections(dep)).toEqual(before);
      expect(backend.seen.length).toBe(seen); // nothing reached the dependency
      // The next correct caller is served.
      expect((await dep.fetch('/')).status).toBe(200);
    });
  }
});

describe("a caller's unusable URL or init, with no baseUrl to resolve against", () => {
  const cases: [string, string, RequestInit | undefined][] = [
    ['a URL that does not parse', 'http://exa mple/', undefined],
    ['a relative path', '/v1/users', undefined],
    ['a scheme fetch does not speak', 'ftp://127.0.0.1/', undefined],
    ['a webhook address that is not one', 'mailto:ops@example.com', undefined],
    ['an init.signal that is not a signal', '', { signal: {} as AbortSignal }],
    ['a redirect mode that does not exist', '', { redirect: 'sideways' } as unknown as RequestInit],
  ];
  for (const [what, input, init] of cases) {
    it(`(${what}) is passed up as it is, and moves nothing shared`, async () => {
      const dep = dependency({ name: 'backend' });
      const before = protections(dep);
      const seen = backend.seen.length;
      for (let i = 0; i < 30; i++) {
        const error = await dep.fetch(input || `${backend.url}/`, init).catch((e: unknown) => e);
        // undici's own error (for a scheme it does not fetch, a 'fetch failed' with nothing
        // sent), not SPILLWAY_E_UNREACHABLE.
        expect(error).toBeInstanceOf(TypeError);
      }
      expect(protections(dep)).toEqual(before);
      expect(backend.seen.length).toBe(seen);
      expect((await dep.fetch(`${backend.url}/`)).status).toBe(200);
    });
  }
});

describe('a redirect to a scheme fetch does not speak', () => {
  it("is the dependency's doing: the caller's URL was fine", async () => {
    const redirecting = await startServer((_req, res) => {
      res.writeHead(302, { location: 'ftp://127.0.0.1/elsewhere' }).end();
    });
    try {
      const dep = dependency({ name: 'redirecting', baseUrl: redirecting.url, retry: false });
      const error = await dep.fetch('/').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DependencyUnreachableError);
      expect(dep.breaker!.toJSON().window).toMatchObject({ failures: 1 });
    } finally {
      await redirecting.close();
    }
  });
});

describe("a caller's short deadline", () => {
  it('passing while the dependency works is not its failure', async () => {
    const dep = dependency({ name: 'backend', baseUrl: backend.url });
    const before = protections(dep);
    for (let i = 0; i < 30; i++) {
      const error = await dep.fetch('/?ms=30', undefined, { deadline: 5 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeadlineExceededError);
    }
    // Slots come back once each fetch has settled.
    await expect.poll(() => dep.active).toBe(0);
    expect(protections(dep)).toEqual(before);
    expect((await dep.fetch('/')).status).toBe(200);
  });
});

/**
 * A front service that copies `?name=` into a header of its call to the backend, as real
 * services copy user input into tracing or routing headers; `?ms=` is the backend's delay.
 */
async function frontService(dep: Dependency, failures: unknown[] = []) {
  const guard = admission({
    limit: 20,
    maxQueue: 20,
    penaltyBox: false,
    onError: (error) => failures.push(error),
  });
  const front = await startServer(
    guard.handle(async (req, res, context) => {
      const url = new URL(req.url ?? '/', 'http://front');
      const answer = await dep.fetch(
        `/?ms=${url.searchParams.get('ms') ?? 0}`,
        { headers: { 'x-name': url.searchParams.get('name') ?? 'anonymous' } },
        { deadline: context, signal: context.signal },
      );
      res.end(await answer.text());
    }),
  );
  return front;
}

function get(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    })
      .on('error', reject)
      .end();
  });
}

describe('a remote client steering a front service', () => {
  it('cannot open the breaker or drain the budget with input the front forwards', async () => {
    const dep = dependency({ name: 'backend', baseUrl: backend.url });
    const failures: unknown[] = [];
    const front = await frontService(dep, failures);
    try {
      const before = protections(dep);
      for (let i = 0; i < 30; i++) {
        // The front's own bug: a 500 for this request, never a 503 telling everyone to back off.
        const r = await get(`${front.url}/?name=a%0Ab`);
        expect(r.status).toBe(500);
        expect(r.headers['retry-after']).toBeUndefined();
      }
      expect(protections(dep)).toEqual(before);
      expect(failures).toHaveLength(30);
      expect(failures[0]).toBeInstanceOf(TypeError);
      expect((await get(`${front.url}/?name=honest`)).status).toBe(200);
    } finally {
      await front.close();
    }
  });

  it('cannot open the breaker with a short Spillway-Deadline', async () => {
    const dep = dependency({ name: 'backend', baseUrl: backend.url });
    const front = await frontService(dep);
    try {
      const before = protections(dep);
      for (let i = 0; i < 30; i++) {
        const r = await get(`${front.url}/?ms=30`, { 'spillway-deadline': '5' });
        expect(r.status).toBe(503);
      }
      await expect.poll(() => dep.active).toBe(0);
      expect(protections(dep)).toEqual(before);
      expect((await get(`${front.url}/?name=honest`)).status).toBe(200);
    } finally {
      await front.close();
    }
  });
});

describe('any init against the real fetch', () => {
  const header = fc.tuple(
    fc.oneof(fc.constantFrom('x-a', 'content-type', 'bad name', 'x\u0100'), fc.string()),
    fc.oneof(fc.constantFrom('v', 'a\nb', 'a\rb', '\u010d', 'x\u0000'), fc.string()),
  );
  const init = fc.record(
    {
      method: fc.oneof(
        fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'CONNECT', 'TRACE'),
        fc.string({ maxLength: 8 }),
      ),
      headers: fc.oneof(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
        fc.array(header, { maxLength: 3 }).map((pairs) => pairs),
      ),
      body: fc.oneof(fc.constant(undefined), fc.constant(null), fc.string({ maxLength: 8 })),
    },
    { requiredKeys: [] },
  );

  it('leaves every slot free and counts only what the backend answered', async () => {
    const dep = dependency({ name: 'backend', baseUrl: backend.url, limit: 4 });
    const budget = dep.budget.available;
    await fc.assert(
      fc.asyncProperty(init, async (i) => {
        await dep.fetch('/', i as RequestInit).catch((error: unknown) => {
          // Only the caller's own mistakes: the backend never fails here.
          expect(error).toBeInstanceOf(TypeError);
        });
        expect(dep.active).toBe(0);
      }),
      { numRuns: 150 },
    );
    const breaker = dep.breaker!.toJSON();
    expect(breaker.state).toBe('closed');
    expect(breaker.window).toMatchObject({ kind: 'time', failures: 0 });
    expect(dep.throttle!.rejectProbability()).toBe(0);
    expect(dep.budget.available).toBe(budget);
  });
});

const root = new URL('../..', import.meta.url).pathname;
const built = existsSync(`${root}dist/client/index.js`);

describe('joined caller signals', () => {
  it.skipIf(!built)(
    'a long-lived signal joined on every call does not grow the heap (dist, --expose-gc)',
    () => {
      // AbortSignal.any kept ~2 KB per call reachable from the long-lived signal on Node 20 and
      // 22. The child process forces a collection before each reading.
      const script = `
        const { dependency } = await import(${JSON.stringify(`${root}dist/client/index.js`)});
        const dep = dependency({ name: 'x', fetch: () => Promise.resolve(new Response(null)) });
        const long = new AbortController().signal;
        const heap = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
        const run = async (n) => {
          for (let i = 0; i < n; i++) {
            await dep.fetch('http://x/', { signal: new AbortController().signal }, { signal: long });
          }
        };
        await run(2000);
        const before = heap();
        await run(20000);
        console.log(JSON.stringify({ perCall: (heap() - before) / 20000 }));
      `;
      const child = spawnSync(
        process.execPath,
        ['--expose-gc', '--input-type=module', '-e', script],
        {
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(child.stderr).toBe('');
      const { perCall } = JSON.parse(child.stdout) as { perCall: number };
      expect(perCall).toBeLessThan(100);
    },
  );
});
