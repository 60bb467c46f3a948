// retryOn and fallback against real servers on 127.0.0.1, through Node's own fetch (no other
// service needed): a gateway that answers 502/504 before it answers well, a callee that
// refuses, one that is not there, and a front service behind the guard that falls back.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependency } from '../../src/client/index.js';
import { admission } from '../../src/node/index.js';
import { close, listen, send } from '../helpers/http.js';
import { startServer, type TestServer } from './servers.js';

let gateway: TestServer;
/** Answers per request id: how many it has seen. */
const seenById = new Map<string, number>();
beforeAll(async () => {
  await (await fetch('data:,warm')).text();
  // `?fail=N&status=S`: the first N requests of an id get S (with a body), the rest 200.
  gateway = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const id = url.searchParams.get('id') ?? '';
    const n = (seenById.get(id) ?? 0) + 1;
    seenById.set(id, n);
    const fail = Number(url.searchParams.get('fail') ?? 0);
    const status = Number(url.searchParams.get('status') ?? 502);
    if (n <= fail) res.writeHead(status, { 'content-type': 'text/plain' }).end(`bad gateway ${n}`);
    else res.end(`ok ${n}`);
  });
});
afterAll(() => gateway.close());

const fast = { backoff: { baseMs: 1, capMs: 5 } };

describe('retryOn: [502, 504] against a real gateway', () => {
  it('retries a GET until it is answered well, each attempt on the wire', async () => {
    const dep = dependency({ name: 'gw', baseUrl: gateway.url, retry: fast, retryOn: [502, 504] });
    const res = await dep.fetch('/?id=get&fail=2&status=504');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok 3');
    const attempts = gateway.seen
      .filter((s) => s.url.includes('id=get&'))
      .map((s) => s.headers['spillway-attempt']);
    expect(attempts).toEqual(['1', '2', '3']);
    await expect.poll(() => dep.active).toBe(0);
  });

  it('returns the last answer, with its body, when every attempt got a 502', async () => {
    const dep = dependency({ name: 'gw', baseUrl: gateway.url, retry: fast, retryOn: [502, 504] });
    const res = await dep.fetch('/?id=always&fail=99');
    expect(res.status).toBe(502);
    expect(await res.text()).toBe('bad gateway 3');
    expect(dep.breaker!.toJSON().window).toMatchObject({ failures: 3 });
  });

  it('sends a POST once', async () => {
    const dep = dependency({ name: 'gw', baseUrl: gateway.url, retry: fast, retryOn: [502, 504] });
    const res = await dep.fetch('/?id=post&fail=1', { method: 'POST', body: 'x' });
    expect(res.status).toBe(502);
    expect(seenById.get('post')).toBe(1);
  });
});

describe('fallback against real callees', () => {
  it('answers a refusal and an unreachable callee, and not a malformed request', async () => {
    const refusing = await startServer((_req, res) => {
      res.writeHead(429, { 'retry-after': '3600' }).end(); // longer than any retry waits
    });
    const gone = createServer();
    const gonePort = await listen(gone);
    await close(gone); // nothing listens there now
    try {
      const codes = (error: unknown) => {
        const e = error as { code: string; cause?: { code?: string } };
        return [e.code, e.cause?.code ?? null];
      };
      const recs = dependency({
        name: 'recs',
        baseUrl: refusing.url,
        fallback: {
          on: ['SPILLWAY_E_OVERLOADED'],
          value: (error) => Response.json({ items: [], codes: codes(error) }),
        },
      });
      expect(await (await recs.fetch('/')).json()).toEqual({
        items: [],
        codes: ['SPILLWAY_E_OVERLOADED', null],
      });
      // A connection refused is retried (it never left): the error after the last attempt is
      // SPILLWAY_E_OVERLOADED, and `on` names the unreachable failure it carries as its cause.
      const down = dependency({
        name: 'down',
        baseUrl: `http://127.0.0.1:${gonePort}`,
        retry: fast,
        fallback: {
          on: ['SPILLWAY_E_UNREACHABLE'],
          value: (error) => Response.json({ items: [], codes: codes(error) }),
        },
      });
      expect(await (await down.fetch('/')).json()).toEqual({
        items: [],
        codes: ['SPILLWAY_E_OVERLOADED', 'SPILLWAY_E_UNREACHABLE'],
      });
      const error = await recs
        .fetch('/', { headers: { 'x-bad': 'a\nb' } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
    } finally {
      await refusing.close();
    }
  });

  it('lets a guarded front service answer 200 with the fallback while its callee refuses', async () => {
    const refusing = await startServer((_req, res) => {
      res.writeHead(503, { 'spillway-retry': 'later', 'retry-after': '3600' }).end();
    });
    const recs = dependency({
      name: 'recs',
      baseUrl: refusing.url,
      fallback: { on: ['SPILLWAY_E_OVERLOADED'], value: () => Response.json([]) },
    });
    const guard = admission({ penaltyBox: false });
    const front = createServer(
      guard.handle(async (_req, res) => {
        const items = (await (await recs.fetch('/')).json()) as unknown[];
        res.end(JSON.stringify({ page: 'home', recommendations: items }));
      }),
    );
    const port = await listen(front);
    try {
      const answer = await send(port, { path: '/' });
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ page: 'home', recommendations: [] });
    } finally {
      await close(front);
      await refusing.close();
    }
  });
});
