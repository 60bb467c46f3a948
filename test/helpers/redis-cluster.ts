// A private Redis Cluster for the tests: 3 masters and a replica each, on reserved free ports
// (data and cluster-bus ports both), in a temp dir of its own, built with
// `redis-cli --cluster create` (valkey-server and valkey-cli under `npm run test:valkey`) —
// never the machine's Redis on 6379. It can move a slot with
// its keys (CLUSTER SETSLOT … IMPORTING/MIGRATING + MIGRATE) and fail a master over (CLUSTER
// FAILOVER on its replica), and every wait is on observable cluster state, bounded in time.
// Cluster clients of both families are connected fail-fast, as the docs ask of users.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster as IoredisCluster, Redis as Ioredis } from 'ioredis';
import { createCluster } from 'redis';
import type { RedisClientLike } from '../../src/redis/index.js';
import {
  ci,
  eventually,
  pingable,
  releasePort,
  reservePort,
  underTest,
  type TestClient,
} from '../redis/helpers.js';

const run = promisify(execFile);

/** Why a private cluster cannot be started here, or undefined. Throws under CI. */
export function clusterToolsMissing(): string | undefined {
  for (const tool of [underTest.server, underTest.cli]) {
    if (spawnSync(tool, ['--version']).status === 0) continue;
    const why = `${tool} is not installed (Debian: ${underTest.debian}); the cluster tests need it`;
    if (ci) throw new Error(`${why}; under CI the Redis tests must run`);
    return why;
  }
  return undefined;
}

/** CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The slot of `key`, computed here (its hash tag's, when it has one), as Redis does. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(Buffer.from(hashed)) % 16384;
}

/** One node as a node of the cluster sees it (a line of CLUSTER NODES). */
export interface NodeView {
  readonly id: string;
  readonly port: number;
  readonly master: boolean;
  /** The master's id, for a replica. */
  readonly masterId: string | undefined;
  /** Slot ranges served, inclusive (a master's). */
  readonly slots: readonly (readonly [number, number])[];
  /** Flags such as `fail`, `fail?`, `handshake`, `noaddr`. */
  readonly flags: readonly string[];
}

interface Node {
  readonly port: number;
  readonly busPort: number;
  proc: ChildProcess | undefined;
  admin: Ioredis | undefined;
}

// Every server this process started, SIGKILLed if the process exits without stopping them.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** Options of {@link PrivateCluster.start}. */
export interface ClusterOptions {
  /** Masters (at least 3 for `redis-cli --cluster create`; 1 is built by hand). @default 3 */
  readonly masters?: number;
  /** Replicas per master. @default 1 */
  readonly replicasPerMaster?: number;
  /** Longest the cluster may take to form and settle. @default 30_000 */
  readonly withinMs?: number;
}

/** A private Redis Cluster; stop it (in afterAll) whatever happened. */
export class PrivateCluster {
  readonly dir: string;
  readonly #nodes: Node[] = [];
  #masters = 0;
  #stopped = false;

  private constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'spillway-cluster-'));
  }

  /** Starts the servers, forms the cluster and waits until every node agrees it is up. */
  static async start(options: ClusterOptions = {}): Promise<PrivateCluster> {
    const masters = options.masters ?? 3;
    const replicas = options.replicasPerMaster ?? 1;
    const withinMs = options.withinMs ?? 30_000;
    const cluster = new PrivateCluster();
    cluster.#masters = masters;
    try {
      for (let i = 0; i < masters * (1 + replicas); i++) {
        cluster.#nodes.push({
          port: await reservePort(),
          busPort: await reservePort(),
          proc: undefined,
          admin: undefined,
        });
      }
      await Promise.all(cluster.#nodes.map((n) => cluster.#spawn(n)));
      if (masters === 1 && replicas === 0) {
        await cluster.#admin(cluster.#nodes[0]!).call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
      } else {
        const addresses = cluster.#nodes.map((n) => `127.0.0.1:${n.port}`);
        await run(
          underTest.cli,
          ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas)].concat(
            '--cluster-yes',
          ),
          { timeout: withinMs },
        );
      }
      await cluster.settled(withinMs);
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** Ports of every node, for a client's seed list. */
  get ports(): number[] {
    return this.#nodes.map((n) => n.port);
  }

  async #spawn(node: Node): Promise<void> {
    const proc = spawn(
      underTest.server,
      [
        ['--port', String(node.port)],
        ['--bind', '127.0.0.1'],
        ['--cluster-enabled', 'yes'],
        // Else a node that has met no other (the one-node cluster) tells clients no address.
        ['--cluster-announce-ip', '127.0.0.1'],
        ['--cluster-port', String(node.busPort)],
        ['--cluster-config-file', join(this.dir, `nodes-${node.port}.conf`)],
        ['--cluster-node-timeout', '2000'],
        ['--dir', this.dir],
        ['--logfile', join(this.dir, `${node.port}.log`)],
        ['--save', ''],
        ['--appendonly', 'no'],
        // A replica's first sync starts at once instead of after 5 s.
        ['--repl-diskless-sync-delay', '0'],
      ].flat(),
      { stdio: 'ignore' },
    );
    node.proc = proc;
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    for (let i = 0; i < 250; i++) {
      if (proc.exitCode !== null || proc.signalCode !== null) break;
      if (await pingable(node.port, 100)) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`cluster node on port ${node.port} did not start (log in ${this.dir})`);
  }

  #admin(node: Node): Ioredis {
    if (node.admin === undefined) {
      node.admin = new Ioredis({
        host: '127.0.0.1',
        port: node.port,
        enableOfflineQueue: true,
        maxRetriesPerRequest: 1,
        retryStrategy: () => 50,
        connectTimeout: 1_000,
        commandTimeout: 5_000,
      });
      node.admin.on('error', () => {});
    }
    return node.admin;
  }

  #node(port: number): Node {
    const node = this.#nodes.find((n) => n.port === port);
    if (node === undefined) throw new Error(`no cluster node on port ${port}`);
    return node;
  }

  /** Runs an admin command on the node at `port` (no redirects followed). */
  command(port: number, ...args: (string | number)[]): Promise<unknown> {
    const [cmd, ...rest] = args.map(String);
    return this.#admin(this.#node(port)).call(cmd!, ...rest);
  }

  /** The cluster as the node at `port` sees it. */
  async view(port: number): Promise<NodeView[]> {
    const text = String(await this.command(port, 'CLUSTER', 'NODES'));
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const [id, address, flags, masterId, , , , , ...slots] = line.split(' ');
        const flagList = flags!.split(',');
        return {
          id: id!,
          port: Number(address!.split('@')[0]!.split(':')[1]),
          master: flagList.includes('master'),
          masterId: masterId === '-' ? undefined : masterId,
          // Ranges only: `[slot->-id]` / `[slot-<-id]` mark a slot being moved.
          slots: slots
            .filter((s) => !s.startsWith('['))
            .map((s) => {
              const [a, b] = s.split('-');
              return [Number(a), Number(b ?? a)] as const;
            }),
          flags: flagList,
        };
      });
  }

  /**
   * Resolves once every node says `cluster_state:ok`, knows every node, sees as many
   * masters as it was started with serving all 16384 slots and every other node a replica of one of them, each
   * replica's link to its master up; throws after `withinMs`.
   */
  async settled(withinMs = 20_000): Promise<void> {
    const n = this.#nodes.length;
    const masters = this.#masters;
    await eventually(
      `the cluster settled (${masters} masters, ${n - masters} replicas)`,
      async () => {
        for (const node of this.#nodes) {
          const info = String(await this.command(node.port, 'CLUSTER', 'INFO'));
          if (!info.includes('cluster_state:ok')) return false;
          if (!info.includes(`cluster_known_nodes:${n}\r`)) return false;
          const view = await this.view(node.port);
          const ms = view.filter((v) => v.master && v.slots.length > 0);
          const covered = ms.flatMap((v) => v.slots).reduce((t, [a, b]) => t + b - a + 1, 0);
          if (ms.length !== masters || covered !== 16384) return false;
          if (view.some((v) => v.flags.some((f) => f.startsWith('fail') || f === 'handshake'))) {
            return false;
          }
          const ids = new Set(ms.map((v) => v.id));
          const rs = view.filter((v) => !v.master);
          if (rs.length !== n - masters || rs.some((r) => !ids.has(r.masterId ?? ''))) {
            return false;
          }
          if (!view.find((v) => v.port === node.port)!.master) {
            const repl = String(await this.command(node.port, 'INFO', 'replication'));
            if (!repl.includes('master_link_status:up')) return false;
          }
        }
        return true;
      },
      withinMs,
    );
  }

  /** The slot of `key`. */
  async slotOf(key: string): Promise<number> {
    return Number(await this.command(this.#nodes[0]!.port, 'CLUSTER', 'KEYSLOT', key));
  }

  /** The port of the master serving `slot`, as the first node sees it. */
  async masterOf(slot: number): Promise<number> {
    const view = await this.view(this.#nodes[0]!.port);
    const m = view.find((v) => v.master && v.slots.some(([a, b]) => slot >= a && slot <= b));
    if (m === undefined) throw new Error(`no master serves slot ${slot}`);
    return m.port;
  }

  /** Ports of the masters serving slots, as the first node sees them. */
  async masters(): Promise<number[]> {
    return (await this.view(this.#nodes[0]!.port))
      .filter((v) => v.master && v.slots.length > 0)
      .map((v) => v.port);
  }

  /**
   * Moves `slot` with its keys from the master serving it to the master at `to`, as
   * `redis-cli --cluster reshard` does: IMPORTING on the target, MIGRATING on the source,
   * MIGRATE the keys `keysPerMigrate` at a time, then SETSLOT NODE everywhere. Meanwhile a
   * key still on the source is served there, one already moved through an ASK redirect, and
   * a script over both kinds is answered TRYAGAIN. `whileMigrating` runs after the keys have
   * moved and before the slot is handed over. Resolves once every node sees `to` serving it.
   */
  async moveSlot(
    slot: number,
    to: number,
    { whileMigrating = () => Promise.resolve(), keysPerMigrate = 100, withinMs = 10_000 } = {},
  ): Promise<void> {
    const from = await this.masterOf(slot);
    if (from === to) throw new Error(`slot ${slot} is already on ${to}`);
    const view = await this.view(from);
    const idOf = (port: number): string => view.find((v) => v.port === port)!.id;
    await this.command(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', idOf(from));
    await this.command(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', idOf(to));
    const until = performance.now() + withinMs;
    for (;;) {
      const keys = (await this.command(
        from,
        'CLUSTER',
        'GETKEYSINSLOT',
        slot,
        keysPerMigrate,
      )) as string[];
      if (keys.length === 0) break;
      if (performance.now() > until) throw new Error(`slot ${slot}: keys still on ${from}`);
      await this.command(from, 'MIGRATE', '127.0.0.1', to, '', 0, 5_000, 'KEYS', ...keys);
    }
    await whileMigrating();
    await this.command(to, 'CLUSTER', 'SETSLOT', slot, 'NODE', idOf(to));
    await this.command(from, 'CLUSTER', 'SETSLOT', slot, 'NODE', idOf(to));
    for (const port of await this.masters()) {
      if (port !== to && port !== from) {
        await this.command(port, 'CLUSTER', 'SETSLOT', slot, 'NODE', idOf(to));
      }
    }
    await eventually(
      `every node sees slot ${slot} on ${to}`,
      async () => {
        for (const node of this.#nodes) {
          const v = await this.view(node.port);
          const owner = v.find((x) => x.master && x.slots.some(([a, b]) => slot >= a && slot <= b));
          if (owner?.port !== to) return false;
        }
        return true;
      },
      Math.max(1, until - performance.now()),
    );
  }

  /**
   * Fails the master at `port` over to its replica (`CLUSTER FAILOVER` on the replica, the
   * coordinated kind: the replica catches up with the master's writes before it takes over)
   * and resolves with the new master's port once the whole cluster has settled again.
   */
  async failover(port: number, withinMs = 20_000): Promise<number> {
    const view = await this.view(port);
    const master = view.find((v) => v.port === port)!;
    const replica = view.find((v) => v.masterId === master.id);
    if (replica === undefined) throw new Error(`master ${port} has no replica`);
    await this.command(replica.port, 'CLUSTER', 'FAILOVER');
    await eventually(
      `replica ${replica.port} took over from ${port}`,
      async () => {
        const role = (await this.command(replica.port, 'ROLE')) as unknown[];
        return role[0] === 'master';
      },
      withinMs,
    );
    await this.settled(withinMs);
    return replica.port;
  }

  /** Kills every node, closes the admin connections and removes the dir. Idempotent. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const node of this.#nodes) node.admin?.disconnect();
    await Promise.all(
      this.#nodes.map(async (node) => {
        const p = node.proc;
        if (p !== undefined && p.exitCode === null && p.signalCode === null) {
          const exited = new Promise((r) => p.once('exit', r));
          p.kill('SIGKILL');
          await exited;
        }
        releasePort(node.port);
        releasePort(node.busPort);
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The client families the cluster tests run over: ioredis `Cluster`, node-redis `createCluster`. */
export type ClusterFlavour = 'ioredis6 Cluster' | 'node-redis6 createCluster';
export const clusterFlavours: readonly ClusterFlavour[] = [
  'ioredis6 Cluster',
  'node-redis6 createCluster',
];

/** `p`, or a rejection naming `what` after `ms`. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * A fail-fast cluster client of `flavour` seeded with `ports`, connected (within 10 s). Its
 * `command` routes by the command's first key (`args[1]`).
 */
export async function connectCluster(
  flavour: ClusterFlavour,
  ports: number[],
): Promise<TestClient> {
  const seeds = ports.map((port) => ({ host: '127.0.0.1', port }));
  if (flavour === 'ioredis6 Cluster') {
    const c = new IoredisCluster(seeds, {
      lazyConnect: true,
      enableOfflineQueue: false,
      clusterRetryStrategy: () => 50,
      slotsRefreshTimeout: 1_000,
      redisOptions: { maxRetriesPerRequest: 0, connectTimeout: 1_000 },
    });
    c.on('error', () => {});
    try {
      await within(10_000, `${flavour} connected`, c.connect());
    } catch (error) {
      c.disconnect();
      throw error;
    }
    const client: RedisClientLike = c;
    return {
      flavour,
      client,
      command: ([cmd, ...rest]) => c.call(cmd!, ...rest),
      close: () => Promise.resolve(c.disconnect()),
    };
  }
  const c = createCluster({
    rootNodes: seeds.map((socket) => ({ socket })),
    defaults: {
      socket: { reconnectStrategy: () => 50, connectTimeout: 1_000 },
      disableOfflineQueue: true,
    },
  });
  c.on('error', () => {});
  const close = (): Promise<void> => {
    try {
      c.destroy();
    } catch {
      // already closed, or never opened
    }
    return Promise.resolve();
  };
  try {
    await within(10_000, `${flavour} connected`, c.connect());
  } catch (error) {
    await close();
    throw error;
  }
  const client: RedisClientLike = c;
  return { flavour, client, command: (args) => c.sendCommand(args[1], false, args), close };
}
