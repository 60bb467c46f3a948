// Shared by the PostgreSQL tests: the machine's PostgreSQL (127.0.0.1:5432, database test,
// trust auth; SPILLWAY_PG_URL points elsewhere), pools whose connections carry an application
// name of their own so pg_stat_activity tells them apart from anyone else's, and a bounded
// poll of what the server says. Outside CI a missing server skips with a message; under CI
// (process.env.CI set) the tests must run.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export { queryWithSignal } from '../../src/cli/serve/query-with-signal.js';

export const postgresUrl =
  process.env['SPILLWAY_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

const ci = process.env['CI'] !== undefined && process.env['CI'] !== '';

/** Why PostgreSQL cannot be used here, or undefined when it answers. Throws under CI. */
export async function postgresMissing(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    const why = `PostgreSQL at ${postgresUrl} is not reachable (${(error as Error).message})`;
    if (ci) throw new Error(`${why}; .ci/run starts it`, { cause: error });
    return why;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A pool of `max` connections named `spillway-test-<random>` in pg_stat_activity. */
export function namedPool(max = 10): { readonly pool: pg.Pool; readonly name: string } {
  const name = `spillway-test-${randomBytes(4).toString('hex')}`;
  const pool = new pg.Pool({
    connectionString: postgresUrl,
    max,
    application_name: name,
    // Nothing here may outlive a test: a forgotten sleep ends at the server within 60 s.
    statement_timeout: 60_000,
  });
  return { pool, name };
}

/** A connection outside any pool, to watch pg_stat_activity and to clean up. */
export async function observer(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: postgresUrl, application_name: 'observer' });
  await client.connect();
  return client;
}

/** One backend of a pool, as pg_stat_activity shows it. */
export interface Backend {
  readonly pid: number;
  readonly state: string;
  readonly query: string;
}

/** The backends of the pool named `name`. */
export async function backends(watch: pg.Client, name: string): Promise<Backend[]> {
  const { rows } = await watch.query<Backend>(
    'select pid, state, query from pg_stat_activity where application_name = $1 order by pid',
    [name],
  );
  return rows;
}

/** The backends of `name` running a query now. */
export async function activeQueries(watch: pg.Client, name: string): Promise<Backend[]> {
  return (await backends(watch, name)).filter((b) => b.state === 'active');
}

/**
 * Reads `read()` every 10 ms until `done` holds for what it returned, and returns that;
 * throws after `withinMs` with the last reading.
 */
export async function pollUntil<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  withinMs = 3_000,
): Promise<T> {
  const giveUpAt = performance.now() + withinMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (performance.now() > giveUpAt) {
      throw new Error(`not within ${withinMs} ms: ${what}; last: ${JSON.stringify(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
