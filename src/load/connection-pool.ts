/**
 * The generator's connections: a keep-alive pool (most recently used first, so warm
 * connections stay warm and cold ones age out) or a new connection per request. The pool is
 * capped; when it is full the caller gets nothing and counts the request as `dropped` instead
 * of queueing it without bound.
 *
 * @module
 */
import { Connection, type ConnectionOwner, type Target } from './connection.js';

/** What the pool reports to the run: responses and failures of requests in flight. */
export interface PoolListener {
  onResponse(connection: Connection): void;
  onFailure(connection: Connection, token: unknown, reason: string): void;
}

/** Options of {@link ConnectionPool}. */
export interface ConnectionPoolOptions {
  readonly target: Target;
  readonly maxConnections: number;
  /** `false`: every connection carries one request and is closed. */
  readonly reuse: boolean;
  readonly idleTimeoutMs: number;
  readonly listener: PoolListener;
}

export class ConnectionPool implements ConnectionOwner {
  readonly #options: ConnectionPoolOptions;
  readonly #idle: Connection[] = [];
  #open = 0;
  #peak = 0;

  constructor(options: ConnectionPoolOptions) {
    this.#options = options;
  }

  /** Connections open or opening. */
  get open(): number {
    return this.#open;
  }

  /** Most connections open at once. */
  get peak(): number {
    return this.#peak;
  }

  /**
   * A connection for one request: the most recently used idle one, or a new one below the
   * cap (always a new one when `fresh`); `undefined` when the pool is full.
   */
  acquire(fresh = false): Connection | undefined {
    if (!fresh) {
      let connection = this.#idle.pop();
      while (connection !== undefined && connection.closed) connection = this.#idle.pop();
      if (connection !== undefined) return connection;
    }
    if (this.#open >= this.#options.maxConnections) return undefined;
    this.#open++;
    if (this.#open > this.#peak) this.#peak = this.#open;
    return new Connection(this.#options.target, this);
  }

  /**
   * Opens up to `count` connections before the schedule starts, so the first second does not
   * pay for connects the steady state never needs. Waits at most `timeoutMs`.
   */
  async warm(count: number, timeoutMs: number, now: number): Promise<void> {
    const opened: Connection[] = [];
    for (let i = 0; i < count; i++) {
      const connection = this.acquire(true);
      if (connection === undefined) break;
      opened.push(connection);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all(opened.map((c) => c.whenConnected())), timeout]);
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

  /** Closes connections idle longer than `idleTimeoutMs` (they are at the bottom). */
  sweep(now: number): void {
    let stale = 0;
    const limit = now - this.#options.idleTimeoutMs;
    while (stale < this.#idle.length && this.#idle[stale]!.idleSince < limit) stale++;
    for (const connection of this.#idle.splice(0, stale)) connection.destroy();
  }

  /** Closes everything. */
  close(): void {
    for (const connection of this.#idle.splice(0)) connection.destroy();
  }

  onResponse(connection: Connection): void {
    this.#options.listener.onResponse(connection);
  }

  onFailure(connection: Connection, token: unknown, reason: string): void {
    this.#options.listener.onFailure(connection, token, reason);
  }

  onClosed(): void {
    this.#open--;
  }
}
