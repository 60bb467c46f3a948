/**
 * Turns `spillway load` arguments into {@link LoadOptions}. Every bad value becomes a
 * {@link UsageError} that names the flag and echoes the value.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { LoadGroup, LoadOptions } from '../load/index.js';
import { arrivals, parseRetryPolicy, type Arrival, type RetryPolicy } from '../load/index.js';
import { parseArgsUsageError, UsageError } from './command.js';

/** What the command does besides the run itself. */
export interface LoadCommandArgs {
  readonly options: LoadOptions;
  readonly json: boolean;
  readonly reportFile: string | undefined;
}

const flags = {
  rate: { type: 'string', short: 'r' },
  duration: { type: 'string', short: 'd', default: '10s' },
  warmup: { type: 'string', default: '0' },
  arrival: { type: 'string', default: 'constant' },
  connections: { type: 'string', short: 'c' },
  'new-connection': { type: 'boolean', default: false },
  'deadline-ms': { type: 'string', default: '10000' },
  'slo-ms': { type: 'string' },
  header: { type: 'string', short: 'H', multiple: true, default: [] as string[] },
  method: { type: 'string', short: 'X', default: 'GET' },
  body: { type: 'string' },
  group: { type: 'string', short: 'g', multiple: true, default: [] as string[] },
  retry: { type: 'string', default: 'none' },
  seed: { type: 'string', default: '1' },
  label: { type: 'string' },
  json: { type: 'boolean', default: false },
  report: { type: 'string' },
} satisfies ParseArgsConfig['options'];

function fail(flag: string, expected: string, value: string): never {
  throw new UsageError(`${flag}: expected ${expected}, got '${value}'`);
}

function positive(flag: string, value: string, integer = false): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    fail(flag, integer ? 'a positive integer' : 'a number greater than 0', value);
  }
  return n;
}

function nonNegative(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    fail(flag, 'a number of 0 or more', value);
  return n;
}

/** `10` or `10s` (seconds), `500ms`, `2m` → milliseconds. */
export function parseDurationMs(flag: string, value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  const unit = (match?.[2] ?? 's') as 'ms' | 's' | 'm';
  const ms = match === null ? Number.NaN : Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[unit];
  if (!(ms > 0)) fail(flag, "a duration like '10s', '500ms' or '2m'", value);
  return ms;
}

function arrival(flag: string, value: string): Arrival {
  if (!(arrivals as readonly string[]).includes(value))
    fail(flag, `one of ${arrivals.join(', ')}`, value);
  return value as Arrival;
}

function retry(flag: string, value: string): RetryPolicy {
  try {
    return parseRetryPolicy(value, flag);
  } catch {
    return fail(flag, "'none', 'immediate:N' or 'backoff:N[:baseMs]'", value);
  }
}

/** `Name: value` → [name, value]. */
export function parseHeader(flag: string, value: string): [string, string] {
  const colon = value.indexOf(':');
  if (colon <= 0) fail(flag, "'Name: value'", value);
  return [value.slice(0, colon).trim(), value.slice(colon + 1).trim()];
}

/**
 * `name:rate[:key=value...]`. Keys `clients`, `path`, `method`, `arrival`, `deadline-ms`,
 * `start`, `duration`, `requests` and `retry` set the group's options; any other key is a
 * header. A value may contain `:` unless it is followed by `key=`.
 */
export function parseGroup(flag: string, value: string): LoadGroup {
  const head = /^([^:=]+):([^:]+)(?::(.*))?$/.exec(value);
  if (head === null) fail(flag, "'name:rate[:key=value...]'", value);
  const at = (what: string): string => `${flag} '${value}': ${what}`;
  const group: Record<string, unknown> = {
    name: head[1],
    ratePerSec: positive(at('rate'), head[2]!),
  };
  const headers: Record<string, string> = {};
  const rest = head[3] === undefined ? [] : head[3].split(/:(?=[A-Za-z0-9_.-]+=)/);
  for (const pair of rest) {
    const eq = pair.indexOf('=');
    if (eq <= 0) fail(at('fields'), "key=value pairs after 'name:rate'", pair);
    const key = pair.slice(0, eq);
    const v = pair.slice(eq + 1);
    switch (key) {
      case 'clients':
        group['clients'] = positive(at(key), v, true);
        break;
      case 'path':
        group['path'] = v;
        break;
      case 'method':
        group['method'] = v;
        break;
      case 'arrival':
        group['arrival'] = arrival(at(key), v);
        break;
      case 'deadline-ms':
        group['deadlineMs'] = nonNegative(at(key), v);
        break;
      case 'start':
        group['startMs'] = parseDurationMs(at(key), v);
        break;
      case 'duration':
        group['durationMs'] = parseDurationMs(at(key), v);
        break;
      case 'requests':
        group['maxRequests'] = positive(at(key), v, true);
        break;
      case 'retry':
        group['retry'] = retry(at(key), v);
        break;
      default:
        headers[key] = v;
    }
  }
  if (Object.keys(headers).length > 0) group['headers'] = headers;
  return group as unknown as LoadGroup;
}

/** Parses the arguments after `spillway load`. */
export function parseLoadArgs(argv: readonly string[]): LoadCommandArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: flags, allowPositionals: true, strict: true });
  } catch (error) {
    throw parseArgsUsageError(error) ?? error;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'missing the target URL: spillway load http://127.0.0.1:3000/ --rate 500'
        : `expected one target URL, got ${positionals.length}: ${positionals.join(' ')}`,
    );
  }
  const url = positionals[0]!;
  if (!/^http:\/\/[^/]/.test(url)) fail('<url>', 'an http:// URL', url);
  const groups = values.group.map((g) => parseGroup('--group', g));
  if (groups.length > 0 && values.rate !== undefined) {
    throw new UsageError('--rate and --group cannot be combined: give each group its own rate');
  }
  if (groups.length === 0 && values.rate === undefined) {
    throw new UsageError(
      'missing --rate (requests per second), or one --group name:rate per stream',
    );
  }
  const headers = Object.fromEntries(values.header.map((h) => parseHeader('--header', h)));
  const options: Record<string, unknown> = {
    url,
    durationMs: parseDurationMs('--duration', values.duration),
    warmupMs: values.warmup.trim() === '0' ? 0 : parseDurationMs('--warmup', values.warmup),
    arrival: arrival('--arrival', values.arrival),
    deadlineMs: nonNegative('--deadline-ms', values['deadline-ms']),
    method: values.method,
    headers,
    retry: retry('--retry', values.retry),
    seed:
      /^-?\d+$/.test(values.seed) && Number.isSafeInteger(Number(values.seed))
        ? Number(values.seed)
        : fail('--seed', 'an integer', values.seed),
    connection: values['new-connection'] ? 'new' : 'keep-alive',
  };
  if (values.rate !== undefined) options['ratePerSec'] = positive('--rate', values.rate);
  if (groups.length > 0) options['groups'] = groups;
  if (values.connections !== undefined)
    options['maxConnections'] = positive('--connections', values.connections, true);
  if (values['slo-ms'] !== undefined) options['sloMs'] = positive('--slo-ms', values['slo-ms']);
  if (values.body !== undefined) options['body'] = values.body;
  if (values.label !== undefined) options['label'] = values.label;
  return {
    options: options as unknown as LoadOptions,
    json: values.json,
    reportFile: values.report,
  };
}
