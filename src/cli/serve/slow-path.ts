/**
 * The reference servers' slow path (`--slow-ms`): a request to `/slow` runs one query of
 * `slowMs` instead of the pool's service time — a report, an export — so a client can hold
 * slots long while staying within its rate quota (the demo's `slots` scenario). The server
 * counts, per client (`x-client-id`), its slow queries running at once, and keeps the most
 * each client had: on every server the query runs inside the request's slot, so that is the
 * most slots the client held.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { SimulatedDatabase } from './simulated-database.js';

/** Requests whose path starts here run the slow query. */
export const slowPathPrefix = '/slow';

/** Most clients whose peak is kept; later ones are counted in `untracked` instead. */
const maxClients = 1_024;

/** What /stats answers about the slow path. */
export interface SlowPathStats {
  readonly slowMs: number;
  /** Slow queries running now. */
  readonly inFlight: number;
  /** Per client, the most slow queries it had running at once. */
  readonly peakByClient: Readonly<Record<string, number>>;
  /** Slow requests of clients past the first 1,024, not counted per client. */
  readonly untracked: number;
}

/** A server's query, slow on the slow path, with the counts behind {@link SlowPathStats}. */
export interface ReferenceQuery {
  (signal: AbortSignal | undefined, req: Pick<IncomingMessage, 'url' | 'headers'>): Promise<void>;
  /** The slow path's counts, or undefined without `--slow-ms`. */
  slowStats(): SlowPathStats | undefined;
}

/** The query each request runs on `db`: the pool's own, or with `slowMs`, a slow one on `/slow`. */
export function referenceQuery(db: SimulatedDatabase, slowMs: number | undefined): ReferenceQuery {
  if (slowMs === undefined) {
    return Object.assign((signal: AbortSignal | undefined) => db.query(signal), {
      slowStats: () => undefined,
    });
  }
  const running = new Map<string, number>();
  const peaks = new Map<string, number>();
  let inFlight = 0;
  let untracked = 0;
  const query = async (
    signal: AbortSignal | undefined,
    req: Pick<IncomingMessage, 'url' | 'headers'>,
  ): Promise<void> => {
    if (req.url?.startsWith(slowPathPrefix) !== true) return db.query(signal);
    const id = req.headers['x-client-id'];
    const client = typeof id === 'string' ? id : '';
    const tracked = peaks.has(client) || peaks.size < maxClients;
    if (!tracked) untracked++;
    const now = (running.get(client) ?? 0) + 1;
    if (tracked) {
      running.set(client, now);
      if (now > (peaks.get(client) ?? 0)) peaks.set(client, now);
    }
    inFlight++;
    try {
      await db.query(signal, slowMs);
    } finally {
      inFlight--;
      if (tracked) {
        const left = running.get(client)! - 1;
        if (left > 0) running.set(client, left);
        else running.delete(client);
      }
    }
  };
  return Object.assign(query, {
    slowStats: (): SlowPathStats => ({
      slowMs,
      inFlight,
      peakByClient: Object.fromEntries(peaks),
      untracked,
    }),
  });
}
