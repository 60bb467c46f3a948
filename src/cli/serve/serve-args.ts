/**
 * Turns `spillway serve` arguments into the reference server's options and where it listens.
 * Every bad value is a {@link UsageError} naming the flag and echoing the value: numbers are
 * read strictly (`Number('')` is 0, so `--port ''` would otherwise mean "any free port"), and a
 * non-loopback `--host` is refused unless asked for, because `/admin/service-ms` has no
 * authentication.
 *
 * @module
 */
import { BlockList, isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { parseArgsUsageError, UsageError } from '../command.js';
import type { ReferenceOptions } from './servers.js';

/** What `spillway serve` runs. */
export interface ServeArgs {
  readonly options: ReferenceOptions;
  readonly listen: { readonly port: number; readonly host: string };
}

/** Most of anything countable a reference server is asked for (connections, tokens/s …). */
const maxCount = 1_000_000;
/** The admin route's own bounds on the service time. */
const serviceMsRange = { min: 1, max: 60_000 } as const;

/**
 * A whole number in `[min, max]`, written as plain digits; `fallback` when the flag is absent.
 */
export function integerFlag(
  flag: string,
  value: string | undefined,
  range: { readonly min: number; readonly max: number; readonly fallback: number },
): number {
  if (value === undefined) return range.fallback;
  const n = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new UsageError(
      `--${flag} must be a whole number from ${range.min} to ${range.max}, got '${value}'`,
    );
  }
  return n;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * Whether binding `host` keeps the server on this machine: `localhost`, 127.0.0.0/8 or ::1
 * (IPv4-mapped forms included). Any other name may resolve to a public address.
 */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && loopback.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

/** `value` if it is a postgres:// or postgresql:// URL; a {@link UsageError} otherwise. */
export function postgresUrl(value: string): string {
  if (!/^postgres(ql)?:\/\/\S+$/.test(value)) {
    throw new UsageError(
      `--pg must be a postgres:// URL such as postgres://postgres@127.0.0.1:5432/test, got '${value}'`,
    );
  }
  return value;
}

/** `--tenant-share`: a fraction in (0, 1], written as plain decimal digits. */
function shareFlag(value: string): number {
  const n = /^(0|1)?(\.\d{1,6})?$/.test(value) ? Number(value) : Number.NaN;
  if (!(n > 0 && n <= 1)) {
    throw new UsageError(`--tenant-share must be a fraction in (0, 1] such as 0.3, got '${value}'`);
  }
  return n;
}

function redisUrl(value: string): string {
  if (!/^rediss?:\/\/\S+$/.test(value)) {
    throw new UsageError(
      `--redis must be a redis:// URL such as redis://127.0.0.1:6379, got '${value}'`,
    );
  }
  return value;
}

/** Parses the arguments after `spillway serve`. */
export function parseServeArgs(argv: readonly string[]): ServeArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        framework: { type: 'string', default: 'node' },
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        'allow-remote-admin': { type: 'boolean', default: false },
        connections: { type: 'string' },
        'service-ms': { type: 'string' },
        work: { type: 'string', default: 'db' },
        'client-rate': { type: 'string' },
        'client-burst': { type: 'string' },
        limit: { type: 'string' },
        redis: { type: 'string' },
        'redis-prefix': { type: 'string', default: 'spillway-serve' },
        replicas: { type: 'string' },
        pg: { type: 'string' },
        'slow-ms': { type: 'string' },
        'tenant-share': { type: 'string' },
        metrics: { type: 'boolean', default: false },
        decisions: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    throw parseArgsUsageError(error) ?? error;
  }
  const { values, positionals } = parsed;
  const mode = positionals[0];
  if (mode !== 'naive' && mode !== 'bounded' && mode !== 'bulkhead') {
    throw new UsageError(
      mode === undefined
        ? "missing the mode: naive, bounded or bulkhead, as in 'spillway serve bounded'"
        : `the mode must be naive, bounded or bulkhead, got '${mode}'`,
    );
  }
  if (positionals.length > 1) {
    throw new UsageError(`expected one mode, got ${positionals.length}: ${positionals.join(' ')}`);
  }
  const framework = values.framework;
  if (framework !== 'node' && framework !== 'express' && framework !== 'fastify') {
    throw new UsageError(`--framework must be node, express or fastify, got '${framework}'`);
  }
  const work = values.work;
  if (work !== 'db' && work !== 'cpu') {
    throw new UsageError(`--work must be db or cpu, got '${work}'`);
  }
  if (values.pg !== undefined && work !== 'db') {
    throw new UsageError('--pg is the database: it applies to --work db');
  }
  if (values['slow-ms'] !== undefined && work !== 'db') {
    throw new UsageError('--slow-ms is a slow query: it applies to --work db');
  }
  if (values['tenant-share'] !== undefined && mode !== 'bounded') {
    throw new UsageError(
      '--tenant-share applies to the bounded server (the others have no client keys to share slots by)',
    );
  }
  if (values.redis !== undefined && (mode !== 'bounded' || framework !== 'node')) {
    throw new UsageError('--redis applies to the bounded server on --framework node');
  }
  if (values.metrics && (mode !== 'bounded' || framework !== 'node')) {
    throw new UsageError(
      '--metrics applies to the bounded server on --framework node (the others make no decisions to count)',
    );
  }
  if (values.decisions && (mode !== 'bounded' || framework !== 'node')) {
    throw new UsageError(
      '--decisions applies to the bounded server on --framework node (the others make no decisions to trace)',
    );
  }
  const host = values.host;
  // Only the node servers have the admin route; the others have nothing to protect.
  if (framework === 'node' && !isLoopbackHost(host) && !values['allow-remote-admin']) {
    throw new UsageError(
      `--host '${host}' is not a loopback address, and /admin/service-ms has no authentication: ` +
        'anyone who can reach it can slow the server down. Add --allow-remote-admin to listen ' +
        'there anyway (on a network you trust).',
    );
  }
  const count = (flag: string, value: string | undefined, fallback: number): number =>
    integerFlag(flag, value, { min: 1, max: maxCount, fallback });
  const connections = count('connections', values.connections, 10);
  const options: ReferenceOptions = {
    mode,
    framework,
    work,
    connections,
    serviceMs: integerFlag('service-ms', values['service-ms'], { ...serviceMsRange, fallback: 30 }),
    clientRatePerSec: count('client-rate', values['client-rate'], 150),
    clientBurst: count('client-burst', values['client-burst'], 15),
    ...(values.limit === undefined
      ? {}
      : {
          limit:
            values.limit === 'adaptive'
              ? ('adaptive' as const)
              : count('limit', values.limit, connections),
        }),
    ...(values.pg === undefined ? {} : { postgresUrl: postgresUrl(values.pg) }),
    ...(values['slow-ms'] === undefined
      ? {}
      : {
          slowMs: integerFlag('slow-ms', values['slow-ms'], { ...serviceMsRange, fallback: 0 }),
        }),
    ...(values['tenant-share'] === undefined
      ? {}
      : { tenantShare: shareFlag(values['tenant-share']) }),
    ...(values.metrics ? { metrics: true } : {}),
    ...(values.decisions ? { decisions: true } : {}),
    ...(values.redis === undefined
      ? {}
      : {
          redis: {
            url: redisUrl(values.redis),
            prefix: values['redis-prefix'],
            replicas: count('replicas', values.replicas, 1),
          },
        }),
  };
  return {
    options,
    listen: { port: integerFlag('port', values.port, { min: 0, max: 65_535, fallback: 0 }), host },
  };
}
