// Shared by the Redis tests: the four client flavours (ioredis 5 and 6, node-redis 5 and 6)
// and iovalkey (the ioredis fork Valkey publishes) configured to fail fast, the machine's Redis
// on 127.0.0.1:6379, and private redis-server processes on free ports for the fault tests.
// `npm run test:valkey` runs the same files against Valkey instead: it starts a valkey-server
// on a free port and names it in SPILLWAY_TEST_SERVER=valkey and SPILLWAY_TEST_REDIS_PORT, and
// every server started here (private ones, cluster nodes) is then a valkey-server. Outside CI,
// tests skip with a message naming exactly what is missing; under CI (process.env.CI set) they
// must run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis as Ioredis6 } from 'ioredis';
import { Redis as Ioredis5 } from 'ioredis5';
import { Redis as Iovalkey } from 'iovalkey';
import { afterAll, beforeAll } from 'vitest';
import { createClient as createNodeRedis6 } from 'redis';
import { createClient as createNodeRedis5 } from 'redis5';
import type { RedisClientLike } from '../../src/redis/index.js';
import { scriptClient, type ScriptClient } from '../../src/redis/script-client.js';

export const ci = process.env['CI'] !== undefined && process.env['CI'] !== '';

/** The server the tests run against, and its tools. */
export interface ServerUnderTest {
  readonly name: 'Redis' | 'Valkey';
  /** The server's executable, for private servers and cluster nodes. */
  readonly server: string;
  /** Its command-line client (`--cluster create`). */
  readonly cli: string;
  /** Where Debian has it. */
  readonly debian: string;
}

const serversUnderTest = {
  redis: { name: 'Redis', server: 'redis-server', cli: 'redis-cli', debian: 'redis-server' },
  valkey: {
    name: 'Valkey',
    server: 'valkey-server',
    cli: 'valkey-cli',
    debian: 'valkey-server (bookworm-backports; main from trixie)',
  },
} as const satisfies Record<string, ServerUnderTest>;

/** Redis unless SPILLWAY_TEST_SERVER says valkey (`npm run test:valkey`). */
export const underTest: ServerUnderTest = ((value) => {
  if (value === undefined || value === '' || value === 'redis') return serversUnderTest.redis;
  if (value === 'valkey') return serversUnderTest.valkey;
  throw new Error(`SPILLWAY_TEST_SERVER must be redis or valkey, got '${value}'`);
})(process.env['SPILLWAY_TEST_SERVER']);

/** The port of the shared server: 6379, or SPILLWAY_TEST_REDIS_PORT. */
export const sharedPort: number = ((value) => {
  if (value === undefined || value === '') return 6379;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`SPILLWAY_TEST_REDIS_PORT must be a port number, got '${value}'`);
  }
  return port;
})(process.env['SPILLWAY_TEST_REDIS_PORT']);

/** A connected client plus how to close it and run plain commands on it. */
export interface TestClient {
  readonly flavour: string;
  readonly client: RedisClientLike;
  command(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

/** Calls `fn` once, synchronously, when `c` starts reconnecting (it is not ready then). */
export function onceReconnecting(c: TestClient, fn: () => void): void {
  (c.client as unknown as { once(event: string, fn: () => void): void }).once('reconnecting', fn);
}

/**
 * Resolves when `check` first returns true, polling every 20 ms (a check that throws, say on
 * a client still reconnecting, counts as false); throws after `withinMs`.
 */
export async function eventually(
  what: string,
  check: () => Promise<boolean> | boolean,
  withinMs = 3_000,
): Promise<void> {
  const until = performance.now() + withinMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    if (performance.now() > until) {
      throw new Error(`not within ${withinMs} ms: ${what}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

export type Flavour = 'ioredis6' | 'ioredis5' | 'node-redis6' | 'node-redis5' | 'iovalkey';
export const flavours: readonly Flavour[] = ['ioredis6', 'node-redis6', 'ioredis5', 'node-redis5'];
/** The current majors, for the heavier fault and multi-process tests. */
export const mainFlavours: readonly Flavour[] = ['ioredis6', 'node-redis6'];

const ioredisOptions = (port: number) =>
  ({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
    connectTimeout: 1_000,
  }) as const;

const nodeRedisOptions = (port: number) => ({
  socket: { host: '127.0.0.1', port, reconnectStrategy: () => 50, connectTimeout: 1_000 },
  disableOfflineQueue: true,
});

/** What ioredis 5, ioredis 6 and iovalkey share, as the tests use it. */
type IoredisShaped = RedisClientLike & {
  on(event: 'error', listener: () => void): unknown;
  connect(): Promise<void>;
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  disconnect(): void;
};

/** `c` (an ioredis-shaped client, not yet connected) connected, as a {@link TestClient}. */
async function ioredisShaped(flavour: Flavour, c: IoredisShaped): Promise<TestClient> {
  c.on('error', () => {});
  await c.connect();
  return {
    flavour,
    client: c,
    command: ([cmd, ...rest]) => c.call(cmd!, ...rest),
    close: () => Promise.resolve(c.disconnect()),
  };
}

/** Connects a fail-fast client of `flavour` to 127.0.0.1:`port`. */
export async function connect(flavour: Flavour, port = sharedPort): Promise<TestClient> {
  switch (flavour) {
    case 'ioredis6':
      return ioredisShaped(flavour, new Ioredis6(ioredisOptions(port)));
    case 'ioredis5':
      return ioredisShaped(flavour, new Ioredis5(ioredisOptions(port)));
    case 'iovalkey':
      return ioredisShaped(flavour, new Iovalkey(ioredisOptions(port)));
    case 'node-redis6': {
      const c = createNodeRedis6(nodeRedisOptions(port));
      c.on('error', () => {});
      await c.connect();
      const client: RedisClientLike = c;
      return { flavour, client, command: (args) => c.sendCommand(args), close: () => destroy(c) };
    }
    case 'node-redis5': {
      const c = createNodeRedis5(nodeRedisOptions(port));
      c.on('error', () => {});
      await c.connect();
      const client: RedisClientLike = c;
      return { flavour, client, command: (args) => c.sendCommand(args), close: () => destroy(c) };
    }
  }
}

function destroy(c: { destroy(): void }): Promise<void> {
  try {
    c.destroy();
  } catch {
    // already closed
  }
  return Promise.resolve();
}

/** A prefix no other test uses. */
export function uniquePrefix(label: string): string {
  return `spwtest:${label}:${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under `prefix` (SCAN + DEL). */
export async function cleanup(c: TestClient, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = (await c.command([
      'SCAN',
      cursor,
      'MATCH',
      `${prefix}:*`,
      'COUNT',
      '1000',
    ])) as [string, string[]];
    cursor = String(next);
    if (keys.length > 0) await c.command(['DEL', ...keys]);
  } while (cursor !== '0');
}

/** True when something answers PING on 127.0.0.1:`port`. */
export function pingable(port = sharedPort, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean): void => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('error', () => done(false));
    s.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** Why the Redis tests cannot run here, or undefined when they can. Throws under CI. */
export async function sharedRedisMissing(): Promise<string | undefined> {
  if (await pingable()) return undefined;
  const why = `no ${underTest.name} answers on 127.0.0.1:${sharedPort} (start one: ${underTest.server} --port ${sharedPort})`;
  if (ci) throw new Error(`${why}; under CI the Redis tests must run`);
  return why;
}

/** Why private servers cannot be started here, or undefined. Throws under CI. */
export function redisServerMissing(): string | undefined {
  const r = spawnSync(underTest.server, ['--version'], { encoding: 'utf8' });
  if (r.status === 0) return undefined;
  const why = `${underTest.server} is not installed (Debian: ${underTest.debian}); fault tests need it`;
  if (ci) throw new Error(`${why}; under CI the Redis tests must run`);
  return why;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

// Test files run in parallel processes. A port is free while its server is down for a
// restart, and freePort() would hand it to another file's server, whose clients then meet
// the wrong server (or ours does): so each private server's port is reserved by a lock file
// for as long as the server object lives, and a lock whose process is gone is taken over.
const portLocks = join(tmpdir(), 'spillway-test-redis-ports');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A free port no other test process has reserved, reserved for this one until released. */
export async function reservePort(): Promise<number> {
  mkdirSync(portLocks, { recursive: true });
  for (let i = 0; i < 100; i++) {
    const port = await freePort();
    const lock = join(portLocks, String(port));
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return port;
    } catch {
      if (!alive(lockOwner(lock))) rmSync(lock, { force: true });
    }
  }
  throw new Error(`could not reserve a port for a private ${underTest.server}`);
}

/** The pid in `lock`; a lock just created and not yet written counts as alive. */
function lockOwner(lock: string): number {
  try {
    const pid = Number(readFileSync(lock, 'utf8'));
    return Number.isSafeInteger(pid) && pid > 0 ? pid : process.pid;
  } catch {
    return process.pid;
  }
}

/** Gives back a port from {@link reservePort}. */
export function releasePort(port: number): void {
  rmSync(join(portLocks, String(port)), { force: true });
}

/** A private redis-server (valkey-server) on a reserved free port, killed by its pid. */
export class PrivateRedis {
  readonly port: number;
  #proc: ChildProcess | undefined;
  #stopped = false;

  private constructor(port: number) {
    this.port = port;
  }

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await reservePort());
    await r.startAgain();
    return r;
  }

  /** (Re)starts the server on the same port and waits until it answers. */
  async startAgain(): Promise<void> {
    this.#proc = spawn(
      underTest.server,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const proc = this.#proc;
    for (let i = 0; i < 100; i++) {
      // Exited (the port taken after all): whatever answers there is not ours.
      if (proc.exitCode !== null || proc.signalCode !== null) break;
      if (await pingable(this.port, 100)) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${underTest.server} on port ${this.port} did not start`);
  }

  /** Sends `signal` to the server process. */
  signal(signal: NodeJS.Signals): void {
    if (signal === 'SIGSTOP') this.#stopped = true;
    if (signal === 'SIGCONT') this.#stopped = false;
    this.#proc?.kill(signal);
  }

  /** SIGKILLs the server and waits for it to be gone. */
  async kill(): Promise<void> {
    const p = this.#proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const p = this.#proc;
    if (p !== undefined && this.#stopped) this.signal('SIGCONT');
    await this.kill();
    releasePort(this.port);
  }
}

/** A private server with two clients on it: `c` for the code under test, `admin` for checks. */
export interface PrivateSetup {
  readonly server: PrivateRedis;
  readonly c: TestClient;
  readonly admin: TestClient;
}

/**
 * Starts a private redis-server and connects `c` and `admin` of `flavour` before the
 * enclosing suite's tests, and stops them all after; read the fields inside tests.
 */
export function privateRedisForSuite(flavour: Flavour): PrivateSetup {
  const setup = {} as { server: PrivateRedis; c: TestClient; admin: TestClient };
  beforeAll(async () => {
    setup.server = await PrivateRedis.start();
    setup.c = await connect(flavour, setup.server.port);
    setup.admin = await connect(flavour, setup.server.port);
  });
  afterAll(async () => {
    await Promise.all([setup.c?.close(), setup.admin?.close()]);
    await setup.server?.stop();
  });
  return setup;
}

/** A client on the machine's Redis, its script runner, and fresh keys under a prefix of its own. */
export interface ScriptSetup {
  readonly c: TestClient;
  readonly sc: ScriptClient;
  /** A key no other test uses, with a hash tag of its own. */
  key(): string;
}

/**
 * Connects an ioredis client to the machine's Redis before the enclosing suite's tests, and
 * deletes its keys and closes it after; read the fields inside tests.
 */
export function scriptsForSuite(label: string): ScriptSetup {
  const prefix = uniquePrefix(label);
  let n = 0;
  const setup = { key: () => `${prefix}:{k${n++}}` } as {
    c: TestClient;
    sc: ScriptClient;
    key(): string;
  };
  beforeAll(async () => {
    setup.c = await connect('ioredis6');
    setup.sc = scriptClient('client', setup.c.client);
  });
  afterAll(async () => {
    await cleanup(setup.c, prefix);
    await setup.c.close();
  });
  return setup;
}
