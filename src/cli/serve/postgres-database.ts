/**
 * The reference servers' database made real (`spillway serve … --pg <url>`): a node-postgres
 * pool of `connections`, each request one `select pg_sleep(serviceMs / 1000)`, shaped like the
 * simulated database so the servers and /stats need not tell them apart. With a signal the
 * query is cancelled in the database when it aborts (queryWithSignal); without one it runs to
 * its end, as a plain `pool.query` does. pg is loaded only here, and only when asked for: it
 * is not a dependency of the package.
 *
 * @module
 */
import type * as Pg from 'pg';
import { queryWithSignal } from './query-with-signal.js';
import type { SimulatedDatabase } from './simulated-database.js';

/** Options of {@link postgresDatabase}. */
export interface PostgresDatabaseOptions {
  /** `postgres://user@host:port/database`. */
  readonly url: string;
  /** Connections in the pool. */
  readonly connections: number;
  /** How long each query sleeps in the database, in ms. */
  readonly serviceMs: number;
}

/** The pool, as the reference servers use a database, plus how to close it. */
export interface PostgresDatabase extends SimulatedDatabase {
  /** Queries cancelled in the database because their signal aborted. */
  readonly cancelled: number;
  /** Ends every connection. */
  close(): Promise<void>;
}

/** Loads pg, or says how to install it. */
export async function loadPg(): Promise<typeof Pg> {
  try {
    const module = (await import('pg')) as typeof Pg & { default?: typeof Pg };
    return module.default ?? module;
  } catch {
    throw new Error('a PostgreSQL database (--pg) needs the pg package: npm install pg');
  }
}

/** Opens the pool and checks that the database answers; rejects with why it does not. */
export async function postgresDatabase(
  options: PostgresDatabaseOptions,
): Promise<PostgresDatabase> {
  const pg = await loadPg();
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.connections,
    application_name: 'spillway-serve',
    connectionTimeoutMillis: 5_000,
  });
  // An idle connection the server ends is the pool's to replace, not a crash of this process.
  pool.on('error', () => undefined);
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    const where = options.url.replace(/\/\/[^@/]*@/, '//');
    throw new Error(`cannot use PostgreSQL at ${where}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let serviceMs = options.serviceMs;
  let served = 0;
  let cancelled = 0;
  return {
    get busy() {
      return pool.totalCount - pool.idleCount;
    },
    get waiting() {
      return pool.waitingCount;
    },
    get served() {
      return served;
    },
    get cancelled() {
      return cancelled;
    },
    get serviceMs() {
      return serviceMs;
    },
    setServiceMs(ms) {
      if (Number.isFinite(ms) && ms >= 1) serviceMs = ms;
    },
    async query(signal, ms) {
      const sleep = { text: 'select pg_sleep($1)', values: [(ms ?? serviceMs) / 1_000] };
      try {
        await queryWithSignal(pool, sleep, { signal });
        served++;
      } catch (error) {
        if (signal?.aborted === true) cancelled++;
        throw error;
      }
    },
    close: () => pool.end(),
  };
}
