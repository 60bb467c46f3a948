// Needs PostgreSQL at 127.0.0.1:5432, database `test`, trust auth (user postgres; set
// SPILLWAY_PG_URL to use another). Outside CI it is skipped with a message when absent.
//
// A real database that stops: a handler guarded by spillway/node runs a slow query
// (pg_sleep) through a pg Pool of 10 with queryWithSignal. When the caller's deadline passes
// or the caller disconnects, the query is cancelled in the database — pg_stat_activity shows
// it gone long before the sleep would end — and the same connections serve the next queries.
// A control run without the helper shows the check would see an abandoned query.
import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admission, type AbortCause } from '../../src/node/index.js';
import { close, listen, send } from '../helpers/http.js';
import {
  activeQueries,
  backends,
  namedPool,
  observer,
  pollUntil,
  postgresMissing,
  queryWithSignal,
} from './helpers.js';

const missing = await postgresMissing();
if (missing !== undefined) console.warn(`skipping the PostgreSQL tests: ${missing}`);

/** Long enough that a query still running when checked was not cancelled: 30 s. */
const longSleep = 'select pg_sleep(30)';
/** A cancelled query must be gone from pg_stat_activity within this, ms (it takes ~15). */
const stopWithinMs = 3_000;

let watch: pg.Client;
beforeAll(async () => {
  if (missing === undefined) watch = await observer();
});
afterAll(async () => {
  await watch?.end();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Resolves once no query of the pool named `name` runs, within {@link stopWithinMs}. */
async function nothingRunning(name: string): Promise<void> {
  const running = () => activeQueries(watch, name);
  await pollUntil('no query left running', running, (a) => a.length === 0, stopWithinMs);
}

/** How a handler runs its query. */
type Run = (pool: pg.Pool, sql: string, options: { signal: AbortSignal }) => Promise<unknown>;

/** A pool of 10 behind a guarded server whose handler runs `sql` with the request's signal. */
async function guardedDatabase(sql: string, run: Run = queryWithSignal) {
  const { pool, name } = namedPool(10);
  const guard = admission({
    limit: 10,
    maxQueue: 10,
    maxQueueWaitMs: 1_000,
    penaltyBox: false,
    // A caller that left is no failure of the server's; the guard would log each one.
    onError: () => undefined,
  });
  const causes: (AbortCause | undefined)[] = [];
  const server: Server = createServer(
    guard.handle(async (_req, res, context) => {
      try {
        await run(pool, sql, { signal: context.signal });
        res.end('done');
      } finally {
        causes.push((context as { abortCause?: AbortCause }).abortCause);
      }
    }),
  );
  const port = await listen(server);
  cleanups.push(async () => {
    await close(server);
    guard.close();
    // Whatever a failing test left running is stopped before the pool goes.
    await watch.query(
      "select pg_cancel_backend(pid) from pg_stat_activity where application_name = $1 and state = 'active'",
      [name],
    );
    await pool.end();
  });
  return { pool, name, port, guard, causes };
}

/** The pids of the pool's 10 connections, each used by one of 10 concurrent queries. */
async function tenPids(pool: pg.Pool): Promise<number[]> {
  const answers = await Promise.all(
    Array.from({ length: 10 }, () =>
      queryWithSignal<{ pid: number }>(pool, 'select pg_backend_pid() as pid, pg_sleep(0.05)'),
    ),
  );
  return answers.map((a) => a.rows[0]!.pid).sort((a, b) => a - b);
}

describe.skipIf(missing !== undefined)('queryWithSignal with a guarded node:http handler', () => {
  it('the caller’s deadline cancels the query in the database; the connections go back usable', async () => {
    const { pool, name, port, guard, causes } = await guardedDatabase(longSleep);
    const before = await tenPids(pool);
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => send(port, { headers: { 'spillway-deadline': '300' } })),
    );
    const answeredInMs = performance.now() - started;
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(503));
    expect(answers[0]!.headers['spillway-retry']).toBe('never');
    expect(causes).toEqual(Array(10).fill('client-deadline'));
    // The slot is held until the handler settles, and the handler settles once the database
    // has stopped: nothing is in flight, and no sleep is left.
    expect(guard.inflight).toBe(0);
    await nothingRunning(name);
    // Answered near the 300 ms deadline, nowhere near the 30 s sleep.
    expect(answeredInMs).toBeLessThan(300 + stopWithinMs);
    expect(pool.totalCount).toBe(10);
    expect(await tenPids(pool)).toEqual(before);
  });

  it('a caller that disconnects cancels its query in the database', async () => {
    const { pool, name, port, causes } = await guardedDatabase(longSleep);
    const before = await tenPids(pool);
    const leave = new AbortController();
    const calls = Array.from({ length: 10 }, () =>
      send(port, { signal: leave.signal }).then(
        () => 'answered',
        () => 'left',
      ),
    );
    // Leave once all ten sleeps run in the database, not after a guessed time.
    await pollUntil(
      'ten sleeps running',
      () => activeQueries(watch, name),
      (a) => a.length === 10,
    );
    leave.abort();
    expect(await Promise.all(calls)).toEqual(Array(10).fill('left'));
    await nothingRunning(name);
    await pollUntil(
      'every handler settled',
      () => causes.length,
      (n) => n === 10,
    );
    expect(causes).toEqual(Array(10).fill('disconnect'));
    expect(pool.totalCount).toBe(10);
    expect(await tenPids(pool)).toEqual(before);
  });

  it('control: a query whose promise is merely abandoned runs on in the database', async () => {
    const abandon: Run = async (pool, sql, o) => {
      const query = pool.query(sql);
      query.catch(() => undefined);
      await new Promise<void>((resolve, reject) => {
        o.signal.addEventListener('abort', () => reject(o.signal.reason as Error), { once: true });
        query.then(() => resolve(), reject);
      });
    };
    const { pool, name, port } = await guardedDatabase(longSleep, abandon);
    // Connected first, as in the cases above: on a busy machine a connection made inside the
    // 200 ms deadline may start its query only after the callers have their answers.
    await tenPids(pool);
    const answers = await Promise.all(
      Array.from({ length: 3 }, () => send(port, { headers: { 'spillway-deadline': '200' } })),
    );
    expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
    // The callers have their answers; the three sleeps still hold their connections (and run
    // for 30 s: nothing stops them before the clean-up does).
    await pollUntil(
      'three abandoned sleeps running',
      () => activeQueries(watch, name),
      (a) => a.length === 3,
    );
  });

  it('an abort right after the query is sent still stops it (the cancel is sent again)', async () => {
    const { pool, name } = namedPool(10);
    cleanups.push(() => pool.end());
    const before = await tenPids(pool);
    for (let round = 0; round < 5; round++) {
      const calls = Array.from({ length: 10 }, (_, i) => {
        const stop = new AbortController();
        const call = queryWithSignal(pool, longSleep, { signal: stop.signal }).then(
          () => 'finished',
          (error: Error) => error.message,
        );
        // 0, 1, 2 … ms after dispatch: before, as and after the server begins the query.
        if (i === 0) queueMicrotask(() => stop.abort(new Error('stopped')));
        else setTimeout(() => stop.abort(new Error('stopped')), i % 4);
        return call;
      });
      expect(await Promise.all(calls)).toEqual(Array(10).fill('stopped'));
      await nothingRunning(name);
    }
    expect(pool.totalCount).toBe(10);
    expect(await tenPids(pool)).toEqual(before);
  });

  it('leaves the pool’s line at once on abort, and never connects for an aborted signal', async () => {
    const { pool, name } = namedPool(1);
    cleanups.push(() => pool.end());
    const gone = AbortSignal.abort(new Error('already gone'));
    await expect(queryWithSignal(pool, 'select 1', { signal: gone })).rejects.toThrow(
      'already gone',
    );
    expect(pool.totalCount).toBe(0);

    const first = new AbortController();
    const holding = queryWithSignal(pool, longSleep, { signal: first.signal }).catch(
      (e: Error) => e.message,
    );
    await pollUntil(
      'the sleep runs',
      () => activeQueries(watch, name),
      (a) => a.length === 1,
    );
    const second = new AbortController();
    const waiting = queryWithSignal(pool, 'select 1', { signal: second.signal });
    second.abort(new Error('left the line'));
    // Rejected while the only connection is still busy with the sleep.
    await expect(waiting).rejects.toThrow('left the line');
    expect(await activeQueries(watch, name)).toHaveLength(1);
    first.abort(new Error('stopped'));
    expect(await holding).toBe('stopped');
    await nothingRunning(name);
    // The late connection for the waiter that left went straight back: one connection, idle.
    await pollUntil(
      'the pool is idle',
      () => [pool.idleCount, pool.waitingCount],
      ([idle, waiting]) => idle === 1 && waiting === 0,
    );
    expect(await backends(watch, name)).toHaveLength(1);
    expect((await queryWithSignal(pool, 'select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});
