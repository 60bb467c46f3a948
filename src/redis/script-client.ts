/**
 * One small structural adapter over the Redis clients users already have: ioredis (4, 5, 6;
 * `Redis` or `Cluster`) and node-redis (`redis` 4, 5, 6; client or cluster). Nothing here
 * imports either package: they are recognised by shape.
 *
 * Two ways to run a script. `run` sends EVALSHA and falls back to EVAL on `NOSCRIPT` (the
 * script cache is empty after a restart, a failover or `SCRIPT FLUSH`): cheap on the hot
 * path, but a call that meets `NOSCRIPT` goes out a second time, behind every call made
 * meanwhile. `runInOrder` sends EVAL, the script's text with the call: never `NOSCRIPT`, so it
 * keeps its place before every later call on the connection. Releases go that way, so a
 * release is never overtaken by the acquire that was made after it. (Loading scripts up front
 * would not do: `SCRIPT FLUSH` empties the cache without a reconnect.)
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';
import type { RedisScript } from './redis-script.js';

type Arg = string | number;

/** The part of an ioredis `Redis` or `Cluster` the store uses. */
export interface IoredisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: Arg[]): Promise<unknown>;
  eval(lua: string, numKeys: number, ...keysAndArgs: Arg[]): Promise<unknown>;
  /** `'ready'` when connected. */
  readonly status: string;
}

/** The part of a node-redis client or cluster the store uses. */
export interface NodeRedisLike {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(lua: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** True when connected (clients); clusters may only have `isOpen`. */
  readonly isReady?: boolean;
  readonly isOpen?: boolean;
  /** node-redis 5 and 6: the same client, its commands sent with these options. */
  withCommandOptions?(options: { timeout: number }): NodeRedisLike;
}

/** A Redis client the store accepts: ioredis or node-redis, recognised by shape. */
export type RedisClientLike = IoredisLike | NodeRedisLike;

/** What the store needs from a client, whichever it is. */
export interface ScriptClient {
  /** Runs `script` (EVALSHA, then EVAL on NOSCRIPT) and returns its integer reply. */
  run(script: RedisScript, keys: string[], args: Arg[]): Promise<unknown>;
  /** Runs `script` by EVAL, sent once: it stays ahead of every call made after it. */
  runInOrder(script: RedisScript, keys: string[], args: Arg[]): Promise<unknown>;
  /** False while the client is disconnected: the store answers by policy without calling. */
  ready(): boolean;
  /** True for a cluster client: one call's keys must then share a slot. @default false */
  readonly cluster?: boolean;
}

/** Recognises `client` and wraps it; throws a config error naming `option` if neither fits. */
export function scriptClient(option: string, client: unknown): ScriptClient {
  const c = client as Partial<IoredisLike & NodeRedisLike> | null;
  if (typeof c === 'object' && c !== null) {
    if (typeof c.evalSha === 'function' && typeof c.eval === 'function') {
      return nodeRedis(c as NodeRedisLike);
    }
    if (typeof c.evalsha === 'function' && typeof c.eval === 'function') {
      return ioredis(c as IoredisLike);
    }
  }
  throw new SpillwayConfigError(
    option,
    'an ioredis client/cluster or a node-redis client/cluster',
    client,
  );
}

/** True when a Redis error says the script is not in the server's cache. */
export function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

/**
 * ioredis flattens array arguments one level (its `Command` takes arrays among its arguments:
 * lodash's `flatten` in 4, `args.flat()` in 5 and 6 and in iovalkey), so keys and arguments go
 * as the two arrays they are: spreading them would copy both into a third array, for ioredis
 * to copy once more (a batch's arrays hold up to 16 items' worth). Its typings do not say so,
 * hence the cast; `IoredisLike` keeps the signature users' clients are typed with.
 */
type FlatteningEval = (
  ...call: [script: string, numKeys: number, keys: Arg[], args: Arg[]]
) => Promise<unknown>;

function ioredis(client: IoredisLike): ScriptClient {
  // Looked up on every call, as before: a client whose methods are wrapped later still is.
  const c = client as unknown as { evalsha: FlatteningEval; eval: FlatteningEval };
  return {
    run(script, keys, args) {
      const n = keys.length;
      return c.evalsha(script.sha, n, keys, args).catch((error: unknown) => {
        if (!isNoScript(error)) throw error;
        return c.eval(script.lua, n, keys, args);
      });
    },
    runInOrder: (script, keys, args) => c.eval(script.lua, keys.length, keys, args),
    ready: () => client.status === 'ready',
    cluster: (client as { isCluster?: unknown }).isCluster === true,
  };
}

/**
 * node-redis 6 gives every command a timeout of its own (`commandOptions.timeout`, 5 s unless
 * set): an `AbortSignal.timeout` per command that bounds only its wait to be written (the
 * listener goes once it is), while the timer and the signal live their full 5 s. Under load
 * each is copied through every young-generation collection and then promoted: under S7's open
 * loop that kept 2.4–4.3 % of all the process allocated alive through each scavenge on Node 20
 * and 22, 0.4 % without it, and a decision's p99 went from 2.1–5.9 ms to 1.1–1.9
 * (`bench/diagnostics/redis-scavenges.js`, `node-redis-5s-timeout`). The gate bounds each call
 * itself (`timeoutMs`, then the failure policy), as it does over ioredis, which has no such
 * timeout by default; and the store makes no call while the client is not ready, so its calls
 * wait to be written only until the client's next write (a `setImmediate` away). So the store's
 * calls go through `withCommandOptions({ timeout: 0 })`; the client itself is left as it is,
 * its readiness and options read from it, and every command of the application's own keeps its
 * timeout.
 */
function nodeRedis(client: NodeRedisLike): ScriptClient {
  const calls =
    typeof client.withCommandOptions === 'function'
      ? client.withCommandOptions({ timeout: 0 })
      : client;
  return {
    run(script, keys, args) {
      const options = { keys, arguments: args.map(String) };
      return calls.evalSha(script.sha, options).catch((error: unknown) => {
        if (!isNoScript(error)) throw error;
        return calls.eval(script.lua, options);
      });
    },
    runInOrder: (script, keys, args) =>
      calls.eval(script.lua, { keys, arguments: args.map(String) }),
    ready: () => client.isReady ?? client.isOpen ?? true,
    // A cluster has masters; a client has none.
    cluster: 'masters' in client,
  };
}
