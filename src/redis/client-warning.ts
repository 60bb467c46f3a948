/**
 * A warning, once per client, when the Redis client given to the store would send commands
 * the store has already given up on: one that queues commands while disconnected (ioredis
 * `enableOfflineQueue`, node-redis without `disableOfflineQueue`) or re-sends unanswered ones
 * after a reconnect (ioredis `autoResendUnfulfilledCommands`). Take scripts carry a
 * server-side expiry and do nothing when they arrive late, but a queue of commands for a
 * Redis that is away is the unbounded queue the store exists to avoid, and what the client
 * holds back it sends all at once on reconnect. Read from the client's options by shape; a
 * client whose options cannot be read is not warned about.
 *
 * @module
 */

/** The `code` of the process warning. */
export const resendWarningCode = 'SPILLWAY_W_REDIS_RESEND';

const warned = new WeakSet<object>();

type Options = Record<string, unknown> | undefined;

/** Emits the warning for `client` if it queues or re-sends, once per client. */
export function warnIfClientResends(client: object): void {
  if (warned.has(client)) return;
  const found = resendingOptions(client);
  if (found.length === 0) return;
  warned.add(client);
  process.emitWarning(
    `The Redis client given to redisStore has ${found.join(' and ')}: it sends commands ` +
      'the store has already given up on once the connection is back. Take scripts expire ' +
      'and do nothing then; configure the client to fail fast so nothing else does either ' +
      '(ioredis: enableOfflineQueue: false, maxRetriesPerRequest: 0; node-redis: ' +
      'disableOfflineQueue: true). See docs/redis.md.',
    { code: resendWarningCode },
  );
}

/** What makes `client` queue or re-send, in its own option names (none when it fails fast). */
export function resendingOptions(client: object): string[] {
  const c = client as {
    evalSha?: unknown;
    options?: Options;
    _options?: Options;
    isCluster?: boolean;
  };
  if (typeof c.evalSha === 'function') {
    // node-redis: a client's options, or a cluster's defaults for its clients.
    const cluster = c._options === undefined ? undefined : (c._options['defaults'] ?? {});
    const own = c.options ?? (cluster as Options);
    if (own === undefined) return [];
    return own['disableOfflineQueue'] === true
      ? []
      : ['its offline queue on (disableOfflineQueue)'];
  }
  const o = c.options;
  if (o === undefined) return [];
  const found: string[] = [];
  if (o['enableOfflineQueue'] !== false) found.push('its offline queue on (enableOfflineQueue)');
  // A Cluster's nodes re-send by their own options.
  const node = c.isCluster === true ? ((o['redisOptions'] as Options) ?? {}) : o;
  // maxRetriesPerRequest: 0 rejects every unanswered command when the connection closes,
  // so nothing is left to re-send.
  if (node['autoResendUnfulfilledCommands'] !== false && node['maxRetriesPerRequest'] !== 0) {
    found.push('re-sending on (autoResendUnfulfilledCommands)');
  }
  return found;
}
