/**
 * The generator's connections: a keep-alive pool (most recently used first, so the few
 * connections the steady state needs stay hot) or a new connection per request. The pool is
 * capped; when it is full the caller gets nothing and counts the request as `dropped` instead
 * of queueing it without bound.
 *
 * Opening a connection costs both ends far more than a request on an open one (the server's
 * accept, its per-connection set-up, a young socket for both garbage collectors to copy), and
 * the need for one comes all at once: when the server stalls, every arrival meanwhile finds
 * its connections busy, and a flood of connects can keep a busy server from answering at all.
 * So the pool keeps a reserve of idle connections alive (the oldest carries the next request
 * once it has idled half the idle timeout, so neither end closes the reserve as idle), opens
 * its warm connections in paced chunks, opens new ones within a budget (beyond it the caller
 * drops the request), and closes surplus idle connections a few at a time, never in one burst
 * the server has to absorb.
 *
 * @module
 */
import { Connection, type ConnectionOwner, type Target } from './connection.js';
import { armTimer } from './timer.js';

/** What the pool reports to the run: responses and failures of requests in flight. */
export interface PoolListener {
  onResponse(connection: Connection, token: unknown): void;
  onFailure(connection: Connection, token: unknown, reason: string): void;
}

/** Options of {@link ConnectionPool}. */
export interface ConnectionPoolOptions {
  readonly target: Target;
  readonly maxConnections: number;
  /** `false`: every connection carries one request and is closed. */
  readonly reuse: boolean;
  /** Idle connections beyond the reserve close after this long. */
  readonly idleTimeoutMs: number;
  /** Idle connections kept alive (in use often enough not to time out at either end). */
  readonly reserve: number;
  /**
   * New connections per second at most once the schedule runs (warm ones are not counted),
   * in bursts of up to `connectBurst`; `Infinity` for no limit.
   */
  readonly maxNewPerSec: number;
  readonly connectBurst: number;
  readonly listener: PoolListener;
}

/** Why {@link ConnectionPool.acquire} had no connection to give. */
export type NoConnection = 'connection cap' | 'connect rate';

/** Warm connections are opened this many at a time (well below a listen backlog of 511). */
const warmChunk = 128;
/**
 * Pause between warm chunks, so the server accepts one chunk before the next arrives: a burst
 * beyond its listen backlog makes the kernel drop SYNs, and those connections wait a second.
 */
const warmChunkGapMs = 10;
/** Most surplus idle connections closed per sweep (the server pays for every close). */
const sweepLimit = 64;

export class ConnectionPool implements ConnectionOwner {
  readonly #options: ConnectionPoolOptions;
  /**
   * Idle connections, oldest first: `#idle[#oldest]` … `#idle[length − 1]` (most recently
   * used). Entries below `#oldest` are spent slots, compacted away now and then.
   */
  #idle: (Connection | undefined)[] = [];
  #oldest = 0;
  readonly #refreshMs: number;
  #open = 0;
  #peak = 0;
  #opened = 0;
  /** Connect budget: tokens left at `#tokensAt`. */
  #tokens: number;
  #tokensAt = 0;

  constructor(options: ConnectionPoolOptions) {
    this.#options = options;
    this.#refreshMs = options.idleTimeoutMs / 2;
    this.#tokens = options.connectBurst;
  }

  /** Connections open or opening. */
  get open(): number {
    return this.#open;
  }

  /** Most connections open at once. */
  get peak(): number {
    return this.#peak;
  }

  /** Connections opened so far, warm ones included. */
  get opened(): number {
    return this.#opened;
  }

  /** Idle connections (some may have been closed by the server since). */
  get idle(): number {
    return this.#idle.length - this.#oldest;
  }

  /**
   * A connection for one request: an idle one, or a new one below the cap and within the
   * connect budget (always a new one when `fresh`, which replaces a connection the server
   * closed and so spends no budget); otherwise why there is none.
   *
   * Of the idle ones it takes the most recently used, except that the oldest goes first once it
   * has idled half the idle timeout and the idle connections are no more than the reserve: so
   * the reserve keeps carrying a request now and then, and neither this pool nor the server
   * closes it as idle before a stall needs it.
   */
  acquire(now: number, fresh = false): Connection | NoConnection {
    if (!fresh) {
      const connection = this.#takeIdle(now);
      if (connection !== undefined) return connection;
    }
    if (this.#open >= this.#options.maxConnections) return 'connection cap';
    if (!fresh && !this.#spendToken(now)) return 'connect rate';
    return this.#connect();
  }

  #spendToken(now: number): boolean {
    const { maxNewPerSec, connectBurst } = this.#options;
    if (maxNewPerSec === Number.POSITIVE_INFINITY) return true;
    const elapsedMs = now - this.#tokensAt;
    if (elapsedMs > 0) {
      this.#tokens = Math.min(connectBurst, this.#tokens + (elapsedMs * maxNewPerSec) / 1000);
      this.#tokensAt = now;
    }
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }

  #takeIdle(now: number): Connection | undefined {
    const idle = this.#idle;
    while (this.#oldest < idle.length) {
      const oldest = idle[this.#oldest]!;
      if (oldest.closed) {
        idle[this.#oldest++] = undefined;
        continue;
      }
      if (oldest.idleSince > now - this.#refreshMs || this.idle > this.#options.reserve) break;
      idle[this.#oldest++] = undefined;
      this.#compact();
      return oldest;
    }
    while (idle.length > this.#oldest) {
      const newest = idle.pop()!;
      if (!newest.closed) {
        this.#compact();
        return newest;
      }
    }
    this.#compact();
    return undefined;
  }

  /** Drops spent slots once they are most of the array (amortised O(1)). */
  #compact(): void {
    if (this.#oldest === this.#idle.length) {
      this.#idle.length = 0;
      this.#oldest = 0;
    } else if (this.#oldest > 1024 && this.#oldest * 2 > this.#idle.length) {
      this.#idle = this.#idle.slice(this.#oldest);
      this.#oldest = 0;
    }
  }

  #connect(): Connection {
    this.#open++;
    this.#opened++;
    if (this.#open > this.#peak) this.#peak = this.#open;
    return new Connection(this.#options.target, this);
  }

  /**
   * Opens up to `count` connections before the schedule starts (at `now`, the run's clock), so
   * the first second does not pay for connects the steady state never needs: in chunks, paced
   * so that the server's listen backlog never overflows. Waits at most `timeoutMs` in all.
   */
  async warm(count: number, timeoutMs: number, now: number): Promise<void> {
    this.#tokensAt = now; // the connect budget counts from the start of the schedule
    const opened: Connection[] = [];
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const timeout = new Promise<void>((resolve) => {
      timer = armTimer(() => {
        timedOut = true;
        resolve();
      }, timeoutMs);
    });
    const pause = (): Promise<void> => new Promise((resolve) => armTimer(resolve, warmChunkGapMs));
    while (opened.length < count && this.#open < this.#options.maxConnections && !timedOut) {
      if (opened.length > 0) await Promise.race([pause(), timeout]);
      const chunk: Promise<boolean>[] = [];
      while (
        chunk.length < warmChunk &&
        opened.length < count &&
        this.#open < this.#options.maxConnections
      ) {
        const connection = this.#connect();
        opened.push(connection);
        chunk.push(connection.whenConnected());
      }
      await Promise.race([Promise.all(chunk), timeout]);
    }
    clearTimeout(timer);
    for (const connection of opened) {
      if (connection.closed) continue;
      connection.idleSince = now;
      this.#idle.push(connection);
    }
  }

  /** Takes a connection back after a complete response. */
  release(connection: Connection, now: number): void {
    connection.token = undefined;
    if (this.#options.reuse && connection.parser.keepAlive && !connection.closed) {
      connection.idleSince = now;
      this.#idle.push(connection);
    } else {
      connection.destroy();
    }
  }

  /**
   * Closes idle connections beyond the reserve that have idled `idleTimeoutMs` (the oldest
   * first, at most `sweepLimit` per call), and forgets those the server closed.
   */
  sweep(now: number): void {
    const limit = now - this.#options.idleTimeoutMs;
    let closed = 0;
    const idle = this.#idle;
    while (this.#oldest < idle.length) {
      const oldest = idle[this.#oldest]!;
      if (!oldest.closed) {
        if (oldest.idleSince >= limit || this.idle <= this.#options.reserve) break;
        if (closed === sweepLimit) break;
        oldest.destroy();
        closed++;
      }
      idle[this.#oldest++] = undefined;
    }
    this.#compact();
  }

  /** Closes everything. */
  close(): void {
    for (let i = this.#oldest; i < this.#idle.length; i++) this.#idle[i]!.destroy();
    this.#idle = [];
    this.#oldest = 0;
  }

  onResponse(connection: Connection, token: unknown): void {
    this.#options.listener.onResponse(connection, token);
  }

  onFailure(connection: Connection, token: unknown, reason: string): void {
    this.#options.listener.onFailure(connection, token, reason);
  }

  onClosed(): void {
    this.#open--;
  }
}
