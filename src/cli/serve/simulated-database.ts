/**
 * A database with a fixed number of connections, each held for a fixed service time — the
 * simulated resource the reference servers run against, so their capacity is known exactly
 * (connections ÷ service time) and independent of CPU noise.
 *
 * @module
 */

/** Options of {@link simulatedDatabase}. */
export interface SimulatedDatabaseOptions {
  /** Connections in the pool. */
  readonly connections: number;
  /** How long each query holds its connection, in ms. */
  readonly serviceMs: number;
  /**
   * Most queries waiting for a connection. The naive server passes `Infinity` on purpose: an
   * unbounded wait list is exactly the failure it exists to show.
   */
  readonly maxWaiting: number;
}

/** The pool. */
export interface SimulatedDatabase {
  /**
   * Waits for a connection, holds it `serviceMs` (or `ms`, for one slow query); stops (and
   * frees it) if `signal` aborts.
   */
  query(signal?: AbortSignal, ms?: number): Promise<void>;
  readonly busy: number;
  readonly waiting: number;
  readonly served: number;
  /** The service time now, in ms. */
  readonly serviceMs: number;
  /** Changes the service time of queries that start from now on (a bad query plan, say). */
  setServiceMs(ms: number): void;
}

/** Thrown when the wait list is full. */
export class PoolExhaustedError extends Error {
  override readonly name = 'PoolExhaustedError';
}

/** Creates the pool. */
export function simulatedDatabase(options: SimulatedDatabaseOptions): SimulatedDatabase {
  const { connections, maxWaiting } = options;
  let serviceMs = options.serviceMs;
  let busy = 0;
  let served = 0;
  // FIFO of waiters; bounded by maxWaiting (Infinity only for the naive baseline).
  let line: Waiter[] = [];
  let head = 0;
  let waiting = 0;

  const release = (): void => {
    while (head < line.length) {
      const next = line[head++]!;
      if (!next.cancelled) {
        waiting--;
        if (head > 1024 && head * 2 > line.length) {
          line = line.slice(head);
          head = 0;
        }
        next.run();
        return;
      }
    }
    busy--;
    line = [];
    head = 0;
  };

  const hold = (signal: AbortSignal | undefined, ms: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        release();
        reject(signal.reason as Error);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        release();
        reject(signal?.reason as Error);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        served++;
        release();
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  return {
    get busy() {
      return busy;
    },
    get waiting() {
      return waiting;
    },
    get served() {
      return served;
    },
    get serviceMs() {
      return serviceMs;
    },
    setServiceMs(ms) {
      if (Number.isFinite(ms) && ms >= 1) serviceMs = ms;
    },
    async query(signal, ms) {
      signal?.throwIfAborted();
      const holdMs = ms ?? serviceMs;
      if (busy < connections) {
        busy++;
        return hold(signal, holdMs);
      }
      if (waiting >= maxWaiting) throw new PoolExhaustedError('every connection is busy');
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          cancelled: false,
          run: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = (): void => {
          waiter.cancelled = true;
          waiting--;
          reject(signal?.reason as Error);
        };
        line.push(waiter);
        waiting++;
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      // The connection was handed over by release(): busy already counts it.
      return hold(signal, holdMs);
    },
  };
}

interface Waiter {
  cancelled: boolean;
  run(): void;
}
