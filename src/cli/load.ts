/**
 * `spillway load <url>`: an open-loop load test from the command line, with a live progress
 * line, a table at the end, `--json` for machines and `--report` for an HTML report.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';
import { formatTable, runLoad, writeReport, type LoadResult } from '../load/index.js';
import { CommandFailure, UsageError, type Command } from './command.js';
import { parseLoadArgs } from './load-args.js';
import { progressReporter } from './progress.js';

const help = `Usage: spillway load <url> [options]

Offers HTTP load on a schedule (open loop): requests go out when they are due, whatever the
server does, and each latency counts from the moment its request should have been sent. Every
request ends as one of: ok (2xx), rejected (429/503, with Retry-After), error (other status),
timeout (the client deadline passed; the socket is destroyed), network (refused, reset,
closed) or dropped (the generator could not send it). See docs/load.md.

Load:
  -r, --rate <n>             requests per second (one stream; or use --group)
  -d, --duration <time>      how long to send: 10s, 500ms, 2m (default 10s)
      --warmup <time>        first send at the same rates for this long, over the same
                             connections, and record none of it, so start-up costs on
                             either side are not charged to the run (default 0)
      --arrival <kind>       constant (evenly spaced) or poisson (random) (default constant)
  -g, --group <spec>         a stream of its own, repeatable:
                             name:rate[:key=value...] where key is clients, path, method,
                             arrival, deadline-ms, start, duration, requests or retry, and
                             any other key is a header; {client} in a value becomes the
                             client number (0 … clients-1)

Requests:
  -X, --method <method>      HTTP method (default GET)
  -H, --header <h>           'Name: value', repeatable, for every group
      --body <text>          request body (sets Content-Length)
      --deadline-ms <ms>     per-attempt client deadline; the socket is destroyed when it
                             passes; 0 for none (default 10000)
      --slo-ms <ms>          goodput counts ok answers within this latency (default: the
                             deadline)
      --retry <policy>       none, immediate:N (N retries at once: a retry storm) or
                             backoff:N[:baseMs] (full jitter, never before Retry-After)
                             (default none)

Connections:
  -c, --connections <n>      most open connections; arrivals finding all busy are dropped
                             (default: rate × deadline × 1.25 + 32, at most 10000)
      --new-connection       a new connection per request (Connection: close)

Output:
      --json                 print the full result as JSON on stdout (no table)
      --report <file.html>   write a self-contained HTML report with charts
      --label <text>         name of the run in the table and the report
      --seed <n>             seed for poisson arrivals and backoff jitter (default 1)

Progress goes to stderr: one live line on a terminal, a line every 5 s otherwise. Ctrl-C
stops sending, waits for the answers in flight, and prints what was measured.

Exit status: 0 once the run is measured; 1 if the host name does not resolve, or if more
than half of the requests failed on the network (nothing listening, say: the run measured
the network, not the server; it still prints what it saw, then why); 2 for bad options.

Examples:
  spillway load http://127.0.0.1:3000/ --rate 500 --duration 5s --deadline-ms 1000
  spillway load http://127.0.0.1:3000/work --rate 3300 --arrival poisson --report run.html
  spillway load http://127.0.0.1:3000/ -d 30s \\
    --group 'greedy:400:x-client-id=greedy' \\
    --group 'polite:100:clients=100:x-client-id=polite-{client}'
  spillway load http://127.0.0.1:3000/ --rate 800 --retry immediate:3 --deadline-ms 500
  spillway load http://127.0.0.1:3000/ --rate 200 --new-connection --json > result.json
`;

export const command: Command = {
  summary: 'open-loop HTTP load test: outcomes apart, latency from the intended send time',
  help,
  async run(argv) {
    const args = parseLoadArgs(argv);
    const progress = progressReporter(process.stderr);
    const controller = new AbortController();
    const onSigint = (): void => controller.abort();
    process.once('SIGINT', onSigint);
    const warmupMs = args.options.warmupMs ?? 0;
    if (warmupMs > 0) {
      process.stderr.write(`warming up for ${warmupMs / 1000} s (not recorded) …\n`);
    }
    let result;
    try {
      result = await runLoad({
        ...args.options,
        signal: controller.signal,
        onWindow: ({ totals }) => progress.update(totals),
      });
    } catch (error) {
      if (error instanceof SpillwayConfigError) throw new UsageError(error.message);
      throw lookupFailure(args.options.url, error) ?? error;
    } finally {
      process.off('SIGINT', onSigint);
      progress.finish();
    }
    if (args.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(`${formatTable(result)}\n`);
    if (args.reportFile !== undefined) {
      await writeReport(args.reportFile, { title: `spillway load ${result.url}`, runs: [result] });
      process.stderr.write(`report written to ${args.reportFile}\n`);
    }
    const failure = networkFailure(result);
    if (failure !== undefined) throw new CommandFailure(failure);
    return 0;
  },
};

/** The host name of `url` failing to resolve, as the line to print; undefined otherwise. */
function lookupFailure(url: string | URL, error: unknown): CommandFailure | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'ENOTFOUND' && code !== 'EAI_AGAIN' && code !== 'EAI_FAIL') return undefined;
  return new CommandFailure(
    `cannot resolve the host '${new URL(url).hostname}' (${code}): check the URL, or use an IP address`,
  );
}

/**
 * Why a run measured the network rather than the server: more than half of the requests sent
 * failed before any answer (refused, reset, closed). Its table would read like a result, so
 * the command names the commonest failure and exits 1 after printing it.
 */
function networkFailure(result: LoadResult): string | undefined {
  const { network, sent, networkByReason } = result.totals;
  if (network === 0 || network * 2 <= sent) return undefined;
  const [reason = 'unknown'] =
    Object.entries(networkByReason).sort(([, a], [, b]) => b - a)[0] ?? [];
  const where = new URL(result.url).host;
  const share = network === sent ? `all ${sent}` : `${network} of ${sent}`;
  switch (reason) {
    case 'ECONNREFUSED':
      return `connection refused at ${where} (ECONNREFUSED) for ${share} requests: is the server running, and on that port?`;
    case 'ECONNRESET':
      return `connections reset at ${where} (ECONNRESET) for ${share} requests: the server closed them without answering`;
    default:
      return `network failures at ${where} for ${share} requests, most of them '${reason}': is an HTTP server listening there?`;
  }
}
