// The cases `spillway/koa` and `spillway/hono` share: both frameworks write the response after
// the middleware returns, so both guards hold a slot until the work after them has settled and
// the response has ended. Each test file builds its app (the routes below, a logger before the
// guard) and runs this table over it, adding only what its framework does differently.
import type { Server } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import type { Admission, AdmissionOptions, RequestContext } from '../../src/node/index.js';
import type { VirtualClock } from '../../src/testing/index.js';
import { close, keepAliveAgent, listen, send, until, type Answer } from '../helpers/http.js';

/**
 * An app behind the guard, with these routes: `/hold` (work that honours its signal), `/stubborn`
 * (work that ignores it), `/stream` (a body streamed until `release`), `/dep` (throws a
 * dependency's `later` overload, 4 s), `/bug` (throws a plain error), `/limited` (its own
 * `guard.route` with a quota of 1 a second, named `limited`, answering with a body that starts
 * with the route's name), and any other path answering `route criticality remainingMs`.
 */
export interface GuardedApp {
  readonly clock: VirtualClock;
  readonly port: number;
  readonly guard: { readonly admission: Admission };
  /** Work on `/hold` and `/stubborn`: how many run, and how each stopped (`done` or the abort's name). */
  readonly work: { running: number; stopped: string[] };
  /** What a logger before the guard saw of each answer it passed on. */
  readonly seen: { status: number; context: RequestContext | undefined }[];
  readonly active: (route?: string) => number | undefined;
  /** Lets the held work and streams go on. */
  readonly release: () => void;
}

/** What differs between the frameworks, as the table needs it. */
export interface Framework<A extends GuardedApp> {
  /** Where the handler finds its context (`ctx.state`, `c.var`). */
  readonly contextIn: string;
  /** Options for the `guard.route` case (Hono exempts `/limited` from the app-wide guard). */
  readonly routeCase: AdmissionOptions;
  /** Checks a refusal over the quota beyond what both frameworks answer alike. */
  readonly quotaRefusal?: (refused: Answer, app: A) => void;
  /** What the framework makes of `/bug` (a plain error from the work). */
  readonly bug: { readonly title: string; readonly check: (bug: Answer, app: A) => void };
}

const servers: Server[] = [];

/** Listens on port 0 and closes the server after the test. */
export function serve(server: Server): Promise<number> {
  servers.push(server);
  return listen(server);
}

/** Registers the shared cases in the current `describe`. */
export function guardCases<A extends GuardedApp>(
  start: (options?: AdmissionOptions) => Promise<A>,
  framework: Framework<A>,
): void {
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(close));
  });

  it(`lets a request through with its context in ${framework.contextIn}, and frees the slot after`, async () => {
    const s = await start({ deadlineMs: 5_000 });
    const answer = await send(s.port, {
      path: '/plain',
      headers: { 'spillway-criticality': 'sheddable-plus', 'spillway-deadline': '800' },
    });
    expect([answer.status, answer.body]).toEqual([200, 'default sheddable-plus 800']);
    await until(() => s.guard.admission.inflight === 0);
    expect(s.active()).toBe(0);
    expect(s.seen[0]!.status).toBe(200);
  });

  it('answers over its quota with 429, and the middleware before it sees the status', async () => {
    const s = await start({ quota: { ratePerSec: 1, burst: 1, name: 'api' } });
    expect((await send(s.port, { path: '/plain' })).status).toBe(200);
    const refused = await send(s.port, { path: '/plain' });
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-policy']).toBe('"api";q=1;w=1');
    expect(refused.headers['content-length']).toBe(String(Buffer.byteLength(refused.body)));
    expect(refused.json()).toMatchObject({ status: 429 });
    expect(s.seen.map((x) => x.status)).toEqual([200, 429]);
    expect(s.seen[1]!.context).toBeUndefined();
    framework.quotaRefusal?.(refused, s);
  });

  it('answers past capacity with 503, and a spent deadline with 503 never', async () => {
    const s = await start({ limit: 1, maxQueue: 0 });
    const holding = send(s.port, { path: '/hold' });
    await until(() => s.work.running === 1);
    const refused = await send(s.port, { path: '/plain' });
    expect([refused.status, refused.headers['spillway-retry']]).toEqual([503, 'later']);
    const spent = await send(s.port, { path: '/plain', headers: { 'spillway-deadline': '0' } });
    expect([spent.status, spent.headers['spillway-retry']]).toEqual([503, 'never']);
    s.release();
    expect((await holding).body).toBe('held');
    await until(() => s.active() === 0);
  });

  it('aborts the signal at the deadline, and frees the slot once the work has stopped', async () => {
    const s = await start({ limit: 1 });
    const pending = send(s.port, { path: '/hold', headers: { 'spillway-deadline': '100' } });
    await until(() => s.work.running === 1);
    await s.clock.advance(99);
    expect(s.work.stopped).toEqual([]);
    await s.clock.advance(1);
    expect((await pending).status).toBe(200);
    expect(s.work.stopped).toEqual(['DeadlineExceededError']);
    await until(() => s.active() === 0);
  });

  it('a client that leaves aborts the signal; the slot is freed when the work has stopped', async () => {
    const s = await start({ limit: 1 });
    const controller = new AbortController();
    const pending = send(s.port, { path: '/hold', signal: controller.signal }).catch(() => 'gone');
    await until(() => s.work.running === 1);
    controller.abort();
    expect(await pending).toBe('gone');
    await until(() => s.work.stopped.length === 1);
    expect(s.work.stopped).toEqual(['AbortError']);
    await until(() => s.active() === 0);
    expect(s.guard.admission.inflight).toBe(0);
  });

  it('work that ignores a departed client holds the slot until it is done', async () => {
    const s = await start({ limit: 1 });
    const controller = new AbortController();
    const pending = send(s.port, { path: '/stubborn', signal: controller.signal }).catch(
      () => 'gone',
    );
    await until(() => s.work.running === 1);
    controller.abort();
    expect(await pending).toBe('gone');
    await new Promise((r) => setTimeout(r, 20));
    expect(s.active()).toBe(1);
    s.release();
    await until(() => s.active() === 0);
  });

  it('a streamed body holds the slot until it has been written, or the client has gone', async () => {
    const s = await start({ limit: 1 });
    const agent = keepAliveAgent();
    const streamed = send(s.port, { path: '/stream', agent });
    await until(() => s.active() === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(s.active()).toBe(1);
    s.release();
    expect((await streamed).body).toBe('first last');
    await until(() => s.active() === 0);
    agent.destroy();
    const controller = new AbortController();
    const left = send(s.port, { path: '/stream', signal: controller.signal }).catch(() => 'gone');
    await until(() => s.active() === 1);
    controller.abort();
    expect(await left).toBe('gone');
    await until(() => s.active() === 0);
  });

  it('exempt paths pass a saturated guard with a context of their own', async () => {
    const s = await start({ limit: 1, maxQueue: 0, routes: [{ match: '/free/*', exempt: true }] });
    const holding = send(s.port, { path: '/hold' });
    await until(() => s.work.running === 1);
    expect((await send(s.port, { path: '/healthz' })).body).toMatch(/^exempt critical/);
    expect((await send(s.port, { path: '/free/a' })).body).toMatch(/^exempt critical/);
    expect((await send(s.port, { path: '/plain' })).status).toBe(503);
    s.release();
    await holding;
  });

  it('guard.route gives a route its own settings', async () => {
    const s = await start(framework.routeCase);
    expect((await send(s.port, { path: '/limited' })).body).toMatch(/^limited/);
    const refused = await send(s.port, { path: '/limited' });
    expect([refused.status, refused.headers['ratelimit-policy']]).toEqual([
      429,
      '"limited";q=1;w=1',
    ]);
    expect((await send(s.port, { path: '/plain' })).status).toBe(200);
    expect(s.active('limited')).toBe(0);
  });

  it(`a dependency's overload becomes its refusal; a bug ${framework.bug.title}`, async () => {
    const s = await start();
    const dep = await send(s.port, { path: '/dep' });
    expect([dep.status, dep.headers['spillway-retry'], dep.headers['retry-after']]).toEqual([
      503,
      'later',
      '4',
    ]);
    expect(dep.headers['content-type']).toBe('application/problem+json');
    expect(dep.json()).toMatchObject({ type: 'urn:spillway:problem:dependency-overloaded' });
    framework.bug.check(await send(s.port, { path: '/bug' }), s);
    expect(s.guard.admission.inflight).toBe(0);
  });
}
