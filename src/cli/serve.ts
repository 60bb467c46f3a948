/**
 * `spillway serve <naive|bounded>`: runs a reference server — the simulated database behind an
 * accept-everything server or behind Spillway — for the demo, the benchmarks and for trying
 * Spillway by hand. Prints `listening on <port>` once ready.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { UsageError, type Command } from './command.js';
import { startReferenceServer, type ReferenceOptions } from './serve/servers.js';

const help = `Usage: spillway serve <naive|bounded> [options]

Runs a reference server over a simulated database (a pool of connections, each held for a
fixed service time), so capacity is known exactly: connections / service time
(10 / 30 ms = 333 req/s by default).

  naive     accepts everything: an unbounded wait for a connection, no deadline.
  bounded   Spillway's reference setup: 10 slots with a line of 10 and a 50 ms wait bound,
            per-client buckets of 150/s (burst 15) keyed on the x-client-id header (trusted
            explicitly in this example), a 1 s deadline per request, /healthz exempt.
  bulkhead  the peer to beat: a bare node:http server with cockatiel's bulkhead(10, 10)
            (needs the cockatiel package; node framework only).

Options:
  --framework <node|express|fastify>  server framework (default: node)
  --port <n>                          port to listen on; 0 picks a free one (default: 0)
  --host <addr>                       address to bind (default: 127.0.0.1)
  --connections <n>                   database connections (default: 10)
  --service-ms <ms>                   time each query holds a connection (default: 30)
  --work <db|cpu>                     wait on the database, or spin the CPU for service-ms
                                      per request instead (default: db)
  --client-rate <n>                   bounded: tokens per second per client (default: 150)
  --client-burst <n>                  bounded: bucket size per client (default: 15)
  --limit <n|adaptive>                bounded: requests in flight, or 'adaptive' to learn it
                                      with a gradientLimit (default: the connections)
  --redis <url>                       bounded: share the per-client quota across replicas
                                      in this Redis (redis://127.0.0.1:6379); needs ioredis
                                      or redis installed
  --redis-prefix <p>                  key prefix in Redis (default: spillway-serve)
  --replicas <n>                      replicas sharing the quota, for the local fallback
                                      share if Redis fails (default: 1)
  -h, --help                          show this help

Endpoints: every path runs one query and answers {"ok":true}; /healthz answers ok;
/stats answers the process's RSS and peak RSS, the pool's state and the guard's;
/admin/service-ms?ms=300 changes the database's service time from now on (naive, bulkhead
and bounded on node).

Examples:
  spillway serve bounded --port 8080
  spillway serve naive --framework express --port 8081
`;

function positiveInt(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new UsageError(`--${flag} must be a whole number, got '${value}'`);
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

export const serve: Command = {
  summary: 'run a reference server (naive or bounded) over a simulated database',
  help,
  async run(argv) {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        framework: { type: 'string', default: 'node' },
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        connections: { type: 'string' },
        'service-ms': { type: 'string' },
        work: { type: 'string', default: 'db' },
        'client-rate': { type: 'string' },
        'client-burst': { type: 'string' },
        limit: { type: 'string' },
        redis: { type: 'string' },
        'redis-prefix': { type: 'string', default: 'spillway-serve' },
        replicas: { type: 'string' },
      },
    });
    const mode = positionals[0];
    if (mode !== 'naive' && mode !== 'bounded' && mode !== 'bulkhead') {
      throw new UsageError(`serve needs a mode: 'naive' or 'bounded', got '${mode ?? ''}'`);
    }
    const framework = values.framework;
    if (framework !== 'node' && framework !== 'express' && framework !== 'fastify') {
      throw new UsageError(`--framework must be node, express or fastify, got '${framework}'`);
    }
    const work = values.work;
    if (work !== 'db' && work !== 'cpu')
      throw new UsageError(`--work must be db or cpu, got '${work}'`);
    if (values.redis !== undefined && (mode !== 'bounded' || framework !== 'node')) {
      throw new UsageError('--redis applies to the bounded server on --framework node');
    }
    const options: ReferenceOptions = {
      mode,
      framework,
      work,
      connections: Math.max(1, positiveInt('connections', values.connections, 10)),
      serviceMs: Math.max(1, positiveInt('service-ms', values['service-ms'], 30)),
      clientRatePerSec: Math.max(1, positiveInt('client-rate', values['client-rate'], 150)),
      clientBurst: Math.max(1, positiveInt('client-burst', values['client-burst'], 15)),
      ...(values.limit === undefined
        ? {}
        : {
            limit:
              values.limit === 'adaptive'
                ? ('adaptive' as const)
                : Math.max(1, positiveInt('limit', values.limit, 10)),
          }),
      ...(values.redis === undefined
        ? {}
        : {
            redis: {
              url: redisUrl(values.redis),
              prefix: values['redis-prefix'],
              replicas: Math.max(1, positiveInt('replicas', values.replicas, 1)),
            },
          }),
    };
    const server = await startReferenceServer(options, {
      port: positiveInt('port', values.port, 0),
      host: values.host,
    });
    process.stdout.write(`listening on ${server.port}\n`);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        void server.close().then(resolve);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    return 0;
  },
};
