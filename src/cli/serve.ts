/**
 * `spillway serve <naive|bounded|bulkhead>`: runs a reference server — the simulated database
 * behind an accept-everything server, behind Spillway or behind a bare bulkhead — for the
 * demo, the benchmarks and for trying Spillway by hand. Prints `listening on <port>` once
 * ready.
 *
 * @module
 */
import { UsageError, type Command } from './command.js';
import { parseServeArgs } from './serve/serve-args.js';
import { startReferenceServer } from './serve/servers.js';

const help = `Usage: spillway serve <naive|bounded|bulkhead> [options]

Runs a reference server over a simulated database (a pool of connections, each held for a
fixed service time), so capacity is known exactly: connections / service time
(10 / 30 ms = 333 req/s by default).

  naive     accepts everything: an unbounded wait for a connection, no deadline.
  bounded   Spillway's reference setup: 10 slots with a line of 10 and a 50 ms wait bound,
            per-client buckets of 150/s (burst 15) keyed on the x-client-id header (trusted
            explicitly in this example), a 1 s deadline per request, /healthz exempt;
            with --work cpu, the event-loop signal too (eventLoop: true).
  bulkhead  the peer to beat: a bare node:http server with cockatiel's bulkhead(10, 10)
            (needs the cockatiel package; node framework only).

Options:
  --framework <node|express|fastify>  server framework (default: node)
  --port <n>                          port to listen on, 0 to 65535; 0 picks a free one
                                      (default: 0)
  --host <addr>                       address to bind (default: 127.0.0.1); on node, only a
                                      loopback address (127.0.0.0/8, ::1, localhost) unless
                                      --allow-remote-admin is given
  --allow-remote-admin                listen on a non-loopback --host although
                                      /admin/service-ms, which has no authentication, is
                                      then reachable by anyone on the network (see Endpoints)
  --connections <n>                   database connections (default: 10)
  --service-ms <ms>                   time each query holds a connection, 1 to 60000
                                      (default: 30)
  --work <db|cpu>                     wait on the database, or spin the CPU for service-ms
                                      per request instead (default: db)
  --client-rate <n>                   bounded: tokens per second per client (default: 150)
  --client-burst <n>                  bounded: bucket size per client (default: 15)
  --limit <n|adaptive>                bounded: requests in flight, or 'adaptive' to learn it
                                      with a gradientLimit (default: the connections)
  --tenant-share <fraction>           bounded: no client key holds more than this fraction
                                      of the slots (tenantShare.maxShare, in (0, 1]; at
                                      least one slot); over it, 503 (default: no shares)
  --slow-ms <ms>                      a slow path: /slow runs one query of this long
                                      instead of --service-ms (a report, an export), 1 to
                                      60000; /stats then reports, per client, the most slow
                                      queries it had running at once (default: none)
  --pg <url>                          a real PostgreSQL instead of the simulated database
                                      (postgres://postgres@127.0.0.1:5432/test): a pool
                                      of --connections, each query pg_sleep(service-ms);
                                      the bounded server cancels a query in the database
                                      when its caller's deadline passes or it leaves;
                                      needs the pg package
  --metrics                           bounded, node: Prometheus metrics of every admission
                                      decision on /metrics (exempt from admission), through
                                      spillway/otel; needs @opentelemetry/api,
                                      @opentelemetry/sdk-metrics and
                                      @opentelemetry/exporter-prometheus installed
  --decisions                         bounded, node: the guard's decisions in 250 ms windows
                                      as JSON on /decisions (exempt from admission):
                                      admitted, refused by reason, peak in flight and in
                                      line, the limit, time in line; the last 2,400 windows
                                      (10 min), oldest dropped first; needs nothing
                                      installed (the demo's report draws them)
  --redis <url>                       bounded: share the per-client quota across replicas
                                      in this Redis (redis://127.0.0.1:6379); needs ioredis
                                      or redis installed; if Redis is unreachable, it
                                      says so once (and every 30 s at most while it lasts)
                                      and each replica enforces its share of the quota
  --redis-prefix <p>                  key prefix in Redis (default: spillway-serve)
  --replicas <n>                      replicas sharing the quota, for the local fallback
                                      share if Redis fails (default: 1)
  -h, --help                          show this help

Counts (--connections, --client-rate, --client-burst, --limit, --replicas) are whole
numbers from 1 to 1000000.

Endpoints: every path runs one query and answers {"ok":true}; /healthz answers ok;
/stats answers the process's RSS and peak RSS, the pool's state and the guard's;
/metrics (with --metrics) answers the guard's metrics in Prometheus's text format;
/decisions (with --decisions) answers {windowMs, maxWindows, dropped, windows: [...]};
with --slow-ms, paths starting /slow run the slow query instead of the usual one;
/admin/service-ms?ms=300 changes the database's service time from now on (naive, bulkhead
and bounded on node). The admin route is how the demo slows the database mid-run; it has no
authentication, so whoever can reach it can slow the server for everyone. That is why a
node server listens only on loopback unless --allow-remote-admin says otherwise.

SIGINT, SIGTERM or SIGHUP stops the server: it closes its connections and its Redis client
and exits; a second signal exits at once.

Examples:
  spillway serve bounded --port 8080
  spillway serve naive --framework express --port 8081
`;

/** How long a stop may take before the process exits anyway (a handle left open). */
const stopLimitMs = 10_000;
/** Each asks the server to stop; a closed terminal (SIGHUP) as much as Ctrl-C or a supervisor. */
const stopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** What to do about each way `--host` and `--port` can fail to listen. */
const listenHints: Readonly<Record<string, string>> = {
  EADDRINUSE: 'something else listens there; choose another --port, or 0 for a free one',
  EACCES: 'not allowed (ports below 1024 need privileges); choose another --port',
  EADDRNOTAVAIL: 'no such address on this machine; check --host',
  ENOTFOUND: 'the host name does not resolve; check --host',
  EAI_AGAIN: 'the host name could not be resolved now; check --host, or use an address',
};

export const serve: Command = {
  summary: 'run a reference server (naive, bounded or bulkhead) over a simulated database',
  help,
  async run(argv) {
    const { options, listen } = parseServeArgs(argv);
    const log = (line: string): void => void process.stderr.write(`spillway serve: ${line}\n`);
    const server = await startReferenceServer(options, listen, log).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      const hint = code === undefined ? undefined : listenHints[code];
      if (hint !== undefined) {
        throw new UsageError(
          `cannot listen on ${listen.host} port ${listen.port} (${code}): ${hint}`,
        );
      }
      throw error;
    });
    const stopped = new Promise<void>((resolve) => {
      const stop = (): void => {
        for (const signal of stopSignals) process.off(signal, stop);
        // A second signal now takes Node's default action: it ends the process at once.
        setTimeout(() => {
          log(`still running ${stopLimitMs / 1000} s after the signal; exiting`);
          process.exit(1);
        }, stopLimitMs).unref();
        void server.close().then(resolve);
      };
      for (const signal of stopSignals) process.on(signal, stop);
    });
    // Only once a signal would stop it gracefully: whoever reads this line may send one at once.
    process.stdout.write(`listening on ${server.port}\n`);
    await stopped;
    return 0;
  },
};
