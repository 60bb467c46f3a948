/**
 * A Redis connection for the broker scenario, over ioredis if installed, else node-redis (both
 * optional peers): raw commands in, raw replies out, so the scenario's few stream commands
 * read the same on either client. The client itself goes to `redisStreamLag`.
 *
 * @module
 */
import { loadPackage } from './broker-port.js';

type Arg = string | number;

/** One connection. */
export interface RedisConnection {
  /** The client object (ioredis `Redis` or node-redis client). */
  readonly client: unknown;
  /** Sends one command; resolves with Redis's reply as the client gives it (RESP2 arrays). */
  send(args: readonly Arg[]): Promise<unknown>;
  /** Closes the connection at once; pending commands fail. */
  close(): void;
}

interface IoRedis {
  call(command: string, ...args: Arg[]): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  connect(): Promise<void>;
  disconnect(): void;
}

interface NodeRedis {
  sendCommand(args: string[]): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  connect(): Promise<unknown>;
  destroy?(): void;
  disconnect?(): Promise<void>;
}

async function optional<T>(name: string): Promise<T | undefined> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/** Opens a connection to `url` and waits until Redis answers; rejects with why it does not. */
export async function redisConnection(url: string): Promise<RedisConnection> {
  const ioredis = await optional<{ default: new (url: string, options: object) => IoRedis }>(
    'ioredis',
  );
  if (ioredis !== undefined) {
    const client = new ioredis.default(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      disconnectTimeout: 200,
    });
    // Without a listener ioredis prints every failed reconnect; a failed command says enough.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      client.disconnect();
      throw error;
    }
    return {
      client,
      send: ([command, ...args]) => client.call(String(command), ...args),
      close: () => client.disconnect(),
    };
  }
  const nodeRedis = await loadPackage('ioredis', async () => {
    const m = await optional<{
      createClient(options: {
        url: string;
        disableOfflineQueue: boolean;
        socket: { reconnectStrategy: false; connectTimeout: number };
      }): NodeRedis;
    }>('redis');
    if (m === undefined) throw Object.assign(new Error('none'), { code: 'ERR_MODULE_NOT_FOUND' });
    return m;
  });
  // No reconnecting: a demo whose broker went away stops with the reason.
  const client = nodeRedis.createClient({
    url,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: false, connectTimeout: 5_000 },
  });
  client.on('error', () => undefined);
  const close = (): void => {
    if (client.destroy !== undefined) client.destroy();
    else void client.disconnect?.().catch(() => undefined);
  };
  try {
    await client.connect();
  } catch (error) {
    close();
    throw error;
  }
  return { client, send: (args) => client.sendCommand(args.map(String)), close };
}
