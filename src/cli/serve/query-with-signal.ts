/**
 * A node-postgres query that stops in the database when its signal aborts. node-postgres takes
 * no signal, and dropping its promise leaves the query running on the server, holding its
 * connection and its locks. This sends PostgreSQL's own cancel request (what psql sends on
 * Ctrl-C) for the connection's backend, waits until the query has stopped, and only then
 * returns the connection to the pool, so it goes back usable and a late cancel can never hit
 * the next query. docs/postgres.md shows this file as a recipe; a test holds the two alike.
 *
 * @module
 */
import { connect } from 'node:net';
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';

/** Options of {@link queryWithSignal}. */
export interface QueryWithSignalOptions {
  /** Aborts the query: it is cancelled in the database and the promise rejects with the reason. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Longest wait for a cancelled query to stop, in ms. Past it the connection is destroyed
   * rather than returned (the server may then run the query to its end). @default 5000
   */
  readonly cancelGraceMs?: number;
  /**
   * How often the cancel request is sent again while the query runs on, in ms: one that
   * arrives before the server has begun the query is ignored by the server. @default 100
   */
  readonly cancelEveryMs?: number;
}

/**
 * Runs `query` on a connection of `pool`. When `signal` aborts — while waiting for a
 * connection or while the query runs — it rejects with `signal.reason`, once the query has
 * stopped in the database; the connection goes back to the pool.
 */
export async function queryWithSignal<R extends QueryResultRow = QueryResultRow>(
  pool: Pool,
  query: string | QueryConfig,
  options: QueryWithSignalOptions = {},
): Promise<QueryResult<R>> {
  const { signal } = options;
  signal?.throwIfAborted();
  const client = await connectWithSignal(pool, signal);
  if (signal === undefined) {
    try {
      return await client.query<R>(query);
    } finally {
      client.release();
    }
  }
  const running = client.query<R>(query);
  const stopped = running.then(
    () => undefined,
    () => undefined,
  );
  return new Promise<QueryResult<R>>((resolve, reject) => {
    const onAbort = (): void => {
      void stopQuery(client, stopped, options).then((clean) => {
        client.release(clean ? undefined : new Error('the cancelled query did not stop'));
        reject(signal.reason as Error);
      });
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    running.then(
      (result) => {
        if (signal.aborted) return; // onAbort answers
        signal.removeEventListener('abort', onAbort);
        client.release();
        resolve(result);
      },
      (error: Error) => {
        if (signal.aborted) return;
        signal.removeEventListener('abort', onAbort);
        client.release();
        reject(error);
      },
    );
  });
}

/** `pool.connect()`, left at once on abort; a connection that arrives later goes straight back. */
function connectWithSignal(pool: Pool, signal: AbortSignal | undefined): Promise<PoolClient> {
  if (signal === undefined) return pool.connect();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    pool.connect().then(
      (client) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) {
          client.release();
          reject(signal.reason as Error);
        } else resolve(client);
      },
      (error: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Sends cancel requests until the query has stopped; true when it stopped within
 * `cancelGraceMs` and every cancel request has been delivered (so none is still on its way to
 * hit the connection's next query).
 */
async function stopQuery(
  client: PoolClient,
  stopped: Promise<void>,
  options: QueryWithSignalOptions,
): Promise<boolean> {
  const graceMs = options.cancelGraceMs ?? 5_000;
  const everyMs = options.cancelEveryMs ?? 100;
  const giveUpAt = performance.now() + graceMs;
  let done = false;
  void stopped.then(() => (done = true));
  for (;;) {
    const left = giveUpAt - performance.now();
    if (left <= 0) return false;
    const delivered = await cancelRequest(client, left);
    if (!delivered) return false;
    if (done || (await settlesWithin(stopped, Math.min(everyMs, giveUpAt - performance.now()))))
      return true;
  }
}

/** The key PostgreSQL gave this connection for cancel requests (BackendKeyData). */
interface BackendKey {
  readonly processID: number;
  readonly secretKey: number;
  readonly host: string;
  readonly port: number;
}

/**
 * Sends the protocol's CancelRequest for `client`'s backend on a connection of its own (no
 * login and no pool slot: it works when every connection is busy). Resolves true once the
 * server has closed that connection — it has then signalled the backend — or false on an
 * error or after `timeoutMs`.
 */
function cancelRequest(client: PoolClient, timeoutMs: number): Promise<boolean> {
  // node-postgres keeps the key on the client without declaring it in its types.
  const key = client as unknown as BackendKey;
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(80_877_102, 4); // the cancel request code: 1234 << 16 | 5678
  packet.writeInt32BE(key.processID, 8);
  packet.writeInt32BE(key.secretKey, 12);
  return new Promise((resolve) => {
    const socket = key.host.startsWith('/')
      ? connect(`${key.host}/.s.PGSQL.${key.port}`)
      : connect(key.port, key.host);
    let ok = false;
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.once('connect', () => socket.end(packet));
    socket.once('end', () => (ok = true));
    socket.once('error', () => (ok = false));
    socket.once('close', () => resolve(ok));
    socket.resume();
  });
}

function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, ms));
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
