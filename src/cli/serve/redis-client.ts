/**
 * The bounded server's Redis client (`spillway serve bounded --redis`): configured to fail fast
 * (no offline queue, no retries of a command, so a request waits on Redis no longer than the
 * store's own deadline), reporting its health in a few clear lines instead of one line per
 * reconnect attempt, and closed with the server so one signal ends the process.
 *
 * @module
 */
import { systemClock, type Clock } from '../../core/clock/clock.js';

/** The events the report listens to; ioredis and node-redis clients both emit them. */
export interface RedisEvents {
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
}

/** Options of {@link reportRedisHealth}. */
export interface RedisHealthOptions {
  /** The client's URL (shown with any password masked). */
  readonly url: string;
  /** What applies while Redis cannot be used, e.g. the store's failure policy. */
  readonly fallback: string;
  /** Where lines go (one line per call, no newline). */
  readonly log: (line: string) => void;
  /** Least time between two "still unreachable" lines, in ms. @default 30000 */
  readonly remindEveryMs?: number;
  /** @default systemClock */
  readonly clock?: Pick<Clock, 'now'>;
}

/** `redis://user:secret@host` → `redis://user:***@host`. */
export function maskPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.href;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/**
 * Listens to the client's `error` events (without a listener, ioredis prints every failed
 * reconnect attempt and node-redis crashes the process) and reports an outage once, with what
 * applies meanwhile, then at most one reminder per `remindEveryMs` while it lasts, and once more
 * when Redis is ready again.
 */
export function reportRedisHealth(client: RedisEvents, options: RedisHealthOptions): void {
  const clock = options.clock ?? systemClock;
  const remindEveryMs = options.remindEveryMs ?? 30_000;
  const where = `Redis at ${maskPassword(options.url)}`;
  let down = false;
  let failures = 0;
  let downSince = 0;
  let loggedAt = 0;
  client.on('error', (error) => {
    const now = clock.now();
    failures++;
    if (!down) {
      down = true;
      downSince = now;
      loggedAt = now;
      const reason = String(error.message || error.name).slice(0, 200);
      options.log(
        `${where} is unreachable (${reason}); ${options.fallback} until it answers. ` +
          'Reconnecting in the background.',
      );
    } else if (now - loggedAt >= remindEveryMs) {
      loggedAt = now;
      const seconds = Math.round((now - downSince) / 1000);
      options.log(
        `${where} is still unreachable (${failures} failed attempts in ${seconds} s); ${options.fallback}.`,
      );
    }
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    failures = 0;
    options.log(`${where} answers again.`);
  });
}

/** A connected-or-connecting client and how to close it. */
export interface RedisClient {
  readonly client: unknown;
  /** Closes the connection at once and stops reconnecting; pending commands fail. */
  readonly close: () => void;
}

interface IoRedisLike extends RedisEvents {
  disconnect(): void;
}

interface NodeRedisLike extends RedisEvents {
  connect(): Promise<unknown>;
  destroy?(): void;
  disconnect?(): Promise<void>;
}

/**
 * Opens a client for `url`: ioredis if installed, else node-redis (both optional peers). It
 * connects in the background: until Redis answers, the store's failure policy applies.
 */
export async function openRedisClient(
  url: string,
  health: Omit<RedisHealthOptions, 'url'>,
): Promise<RedisClient> {
  const ioredis = await optionalImport<{
    default: new (url: string, options: object) => IoRedisLike;
  }>('ioredis');
  if (ioredis !== undefined) {
    const client = new ioredis.default(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // ioredis waits this long for a socket to close on disconnect, even one that failed to
      // connect and will never close again: that wait held the process open after a stop.
      disconnectTimeout: 200,
    });
    reportRedisHealth(client, { ...health, url });
    return { client, close: () => client.disconnect() };
  }
  const nodeRedis = await optionalImport<{
    createClient: (options: { url: string; disableOfflineQueue: boolean }) => NodeRedisLike;
  }>('redis');
  if (nodeRedis === undefined) {
    throw new Error('--redis needs the ioredis or the redis package: npm install ioredis');
  }
  const client = nodeRedis.createClient({ url, disableOfflineQueue: true });
  reportRedisHealth(client, { ...health, url });
  // Failures are reported through `error`; commands fail fast until it connects.
  client.connect().catch(() => undefined);
  return {
    client,
    close: () => {
      if (client.destroy !== undefined) client.destroy();
      else void client.disconnect?.().catch(() => undefined);
    },
  };
}

async function optionalImport<T>(name: string): Promise<T | undefined> {
  try {
    return (await import(name)) as T;
  } catch {
    return undefined;
  }
}
