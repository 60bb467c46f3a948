/**
 * One TCP connection of the generator's own HTTP/1.1 client, carrying one request at a time.
 * Socket listeners are attached once per connection, not per request, and requests are
 * pre-serialised, so a request costs one write and a little parsing.
 *
 * @module
 */
import { connect, type Socket } from 'node:net';
import { ResponseParser } from './response-parser.js';

/** Where a connection reports; the pool implements it. */
export interface ConnectionOwner {
  /** The request in flight got a complete response (see `connection.parser`). */
  onResponse(connection: Connection, token: unknown): void;
  /**
   * The request in flight (`token`) failed at the transport: refused, reset, closed, garbage.
   * The connection is already destroyed.
   */
  onFailure(connection: Connection, token: unknown, reason: string): void;
  /** The socket closed (whatever the reason); called once. */
  onClosed(connection: Connection): void;
}

/** Shared by every connection: reads are parsed at once and never kept. */
const readBuffer = Buffer.allocUnsafe(64 * 1024);

/** Host and port to connect to (the host already resolved to an address). */
export interface Target {
  readonly host: string;
  readonly port: number;
}

export class Connection {
  readonly parser = new ResponseParser();
  /** Whatever the owner attached to the request in flight; `undefined` when idle. */
  token: unknown = undefined;
  /** Has completed at least one response (so it may have gone stale while pooled). */
  reused = false;
  /** When it went idle (ms, the run's clock). */
  idleSince = 0;
  closed = false;
  readonly #socket: Socket;
  readonly #owner: ConnectionOwner;

  constructor(target: Target, owner: ConnectionOwner) {
    this.#owner = owner;
    // `onread` hands every read of every connection to us in one reused buffer, skipping a
    // Buffer allocation and the stream machinery per read (about a quarter of the client's CPU
    // per request here). Safe because the parser never keeps a reference to a chunk.
    const socket = connect({
      host: target.host,
      port: target.port,
      noDelay: true,
      onread: {
        buffer: readBuffer,
        callback: (bytes: number): boolean => {
          this.#onData(readBuffer.subarray(0, bytes));
          return true;
        },
      },
    });
    this.#socket = socket;
    socket.on('end', () => this.#onEnd());
    socket.on('error', (error: NodeJS.ErrnoException) => this.#fail(error.code ?? error.message));
    socket.on('close', () => {
      this.closed = true;
      this.#fail(this.parser.received === 0 ? 'closed before responding' : 'closed mid-response');
      this.#owner.onClosed(this);
    });
  }

  /** Resolves once connected (true) or failed (false); for warming the pool up. */
  whenConnected(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (!this.#socket.connecting) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        this.#socket.off('connect', onConnect).off('close', onClose);
        resolve(ok);
      };
      const onConnect = (): void => done(true);
      const onClose = (): void => done(false);
      this.#socket.once('connect', onConnect).once('close', onClose);
    });
  }

  /** Sends a request; the connection must be idle. */
  send(request: Buffer, noBody: boolean, token: unknown): void {
    this.token = token;
    this.parser.reset(noBody);
    this.#socket.write(request);
  }

  /** Closes at once (deadline passed, or no longer wanted). Reports nothing. */
  destroy(): void {
    this.token = undefined;
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    if (this.token === undefined) {
      // Bytes while idle: the server is out of step with us; do not reuse this connection.
      this.#socket.destroy();
      return;
    }
    const result = this.parser.feed(chunk);
    if (result === 'done') this.#complete();
    else if (result === 'error') this.#fail(`bad response: ${this.parser.error}`);
  }

  #onEnd(): void {
    if (this.token !== undefined) {
      if (this.parser.end() === 'done') this.#complete();
      else this.#fail(this.parser.error);
    }
    this.#socket.destroy();
  }

  #complete(): void {
    this.reused = true;
    // Idle from here: bytes before the next request are the server's error, and an idle
    // connection must not keep its last request alive (it would outlive young collections).
    const token = this.token;
    this.token = undefined;
    this.#owner.onResponse(this, token);
  }

  #fail(reason: string): void {
    const token = this.token;
    if (token === undefined) return;
    this.token = undefined;
    this.#socket.destroy();
    this.#owner.onFailure(this, token, reason);
  }
}
