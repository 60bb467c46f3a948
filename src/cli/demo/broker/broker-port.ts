/**
 * What the broker scenario needs of a broker, whichever it is: a line (a stream or a queue of
 * its own, bounded in time or not) to publish into, read the lag of, consume from with a fixed
 * number of permits, and delete. One file per broker fills it in over the broker's own client,
 * loaded only when asked for (none is a dependency of the package).
 *
 * @module
 */
import type { ReadLag } from '../../../core/lag-gate/lag-gate.js';
import type { BrokerName } from './settings.js';

/** Runs one message; the consumer acknowledges it when this resolves. */
export type LineHandler = (body: string) => Promise<void>;

/** A running consumer. */
export interface LineConsumer {
  /** Stops taking messages and resolves once the running handlers have settled. */
  stop(): Promise<void>;
}

/** One stream or queue, made for one way of running and deleted after it. */
export interface BrokerLine {
  /** What it is, for the log: `stream spillway-demo-… on nats://127.0.0.1:4222`. */
  readonly where: string;
  /** Publishes `body`; resolves when the broker has it (a PubAck, a confirm, an XADD reply). */
  publish(body: string): Promise<void>;
  /** The consumer's lag, read from the broker (through Spillway's lag source for it). */
  readonly readLag: ReadLag;
  /** Starts consuming with `permits` handlers at most. */
  consume(options: {
    readonly permits: number;
    readonly handler: LineHandler;
  }): Promise<LineConsumer>;
  /** Deletes the stream or queue; never throws (a broker gone away has nothing to delete). */
  delete(): Promise<void>;
}

/** How a line is made. */
export interface LineOptions {
  /** A name no other run uses. */
  readonly name: string;
  /** The broker drops messages older than this, in ms; undefined: it keeps everything. */
  readonly ttlMs?: number | undefined;
}

/** A connected broker. */
export interface BrokerPort {
  readonly name: BrokerName;
  /** Where it is (any password masked). */
  readonly url: string;
  /** Makes a line. */
  line(options: LineOptions): Promise<BrokerLine>;
  /** Closes the connections. */
  close(): Promise<void>;
}

/** `amqp://guest:guest@host` → `amqp://guest:***@host`. */
export function maskedUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
}

/** Loads an optional package, or says how to install it. */
export async function loadPackage<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(`it needs the ${name} package: npm install ${name}`, {
        cause: error,
      });
    }
    throw error;
  }
}
