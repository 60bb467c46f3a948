/**
 * The guard's options, and the settings they resolve to: every option checked once, at
 * construction, with a `SpillwayConfigError` naming the one that is wrong. Per-route settings
 * (limits, lines, quotas, deadlines) are checked by `route.ts`.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import {
  penaltyBox,
  systemClock,
  SpillwayConfigError,
  type Clock,
  type PenaltyBoxLike,
  type PenaltyBoxOptions,
} from '../index.js';
import { headerNamesOf, type HeaderNames } from '../http/index.js';
import { ambientOption, type AmbientMode } from './ambient.js';
import type { TrustProxy } from './client-address.js';
import { guardHooks, type GuardHookOptions, type GuardHooks } from './guard-hooks.js';
import {
  eventLoopMonitor,
  type EventLoopMonitor,
  type EventLoopMonitorOptions,
} from './event-loop-monitor.js';
import { memoryMonitor, type MemoryMonitor, type MemoryMonitorOptions } from './memory-monitor.js';
import type { RouteOptions, RouteSettings } from './route.js';

/** Options of `admission`: defaults for every route, plus the routes. */
export interface AdmissionOptions extends RouteSettings, GuardHookOptions {
  /**
   * The client key for quotas and penalties. Default: the socket's remote address (or a
   * forwarded one, under `trustProxy`). Return undefined to fall back to the default. If it
   * throws, the request is answered 500 and `onError` is told.
   */
  readonly key?: (req: IncomingMessage) => string | undefined;
  /**
   * Whether to believe `X-Forwarded-For` for the default key: a number of trusted proxies in
   * front of this server, `true` for one (see `clientAddress`). @default false
   */
  readonly trustProxy?: TrustProxy;
  /**
   * For the default key: the bits of an IPv6 client address that name the client, so one that
   * rotates through the addresses of its prefix keeps one quota (see `clientKey`). From 1 to
   * 128; 128 keys every address apart. IPv4 addresses (and IPv4-mapped ones) are keyed whole.
   * @default 56 (what express-rate-limit 8 uses: a subscriber's usual delegation)
   */
  readonly ipv6Prefix?: number;
  /** Paths that are never counted or limited. @default ['/healthz', '/readyz', '/livez'] */
  readonly exempt?: readonly string[];
  /** Per-route settings, tried in order after exact paths. */
  readonly routes?: readonly RouteOptions[];
  /**
   * Escalation for clients that ignore 429s: its options (a box in this process's memory), a
   * box you made (`redisPenaltyBox` shares one across replicas; the guard then does not close
   * it), or `false` to turn it off. @default {} (on, defaults)
   */
  readonly penaltyBox?: PenaltyBoxOptions | PenaltyBoxLike | false;
  /**
   * Header names, if not the defaults: HTTP field names in any letter case, checked at
   * construction (see `headerNamesOf`).
   */
  readonly headerNames?: Partial<HeaderNames>;
  /**
   * Signal for capacity refusals: `later` (retry here after Retry-After; the default for a
   * single server) or `elsewhere` (another replica; no Retry-After). @default 'later'
   */
  readonly capacitySignal?: 'later' | 'elsewhere';
  /**
   * Watch the event loop itself and shed by criticality while it is saturated (see
   * `eventLoopMonitor`): `true` for the defaults, its options, or a monitor you made (which the
   * guard then does not close). @default false
   */
  readonly eventLoop?: boolean | EventLoopMonitorOptions | EventLoopMonitor;
  /**
   * Watch the heap and the resident set and shed by criticality while either is over its
   * bound (see `memoryMonitor`): its options, or a monitor you made (which the guard then
   * does not close). @default undefined (not watched)
   */
  readonly memory?: MemoryMonitorOptions | MemoryMonitor;
  /**
   * Requests in flight across every route of this guard, checked after the route's own limit:
   * one more is refused (503 `overloaded`, `later`), whatever its route, so routes with limits
   * of their own cannot together take more than the process can hold. A whole number.
   * @default Infinity
   */
  readonly maxInFlight?: number;
  /**
   * Failures that are not overload, answered with 500: a handler's, or admission's own (a `key`
   * or route `match` function that threw). @default logs to stderr
   */
  readonly onError?: (error: unknown, req: IncomingMessage) => void;
  /**
   * Put the client key on the diagnostics channels' messages (`spillway:admission`,
   * `spillway:quota`, `spillway:penalty`, `spillway:http:refusal`). Off by default: the key is
   * personal (an address, a user id) and unbounded, so it is published only when asked for.
   * @default false
   */
  readonly publishKey?: boolean;
  /**
   * Run each admitted request's handler inside its ambient context (`currentContext()`), so
   * `spillway/client` sends the request's remaining deadline and criticality on to the next
   * hop with no code in the handler. By default from the moment the process has a reader of it
   * (a `dependency()`, or a call to `currentContext()`); `true` from the first request; `false`
   * keeps handlers out of it (each call then passes them by hand).
   * @default true once the process has a reader
   */
  readonly ambientContext?: boolean;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** The options, checked, with their defaults filled in. */
export interface GuardSettings {
  readonly clock: Clock;
  readonly headerNames: HeaderNames;
  readonly exempt: ReadonlySet<string>;
  readonly key: ((req: IncomingMessage) => string | undefined) | undefined;
  readonly trustProxy: TrustProxy;
  readonly ipv6Prefix: number;
  readonly capacitySignal: 'later' | 'elsewhere';
  readonly box: PenaltyBoxLike | undefined;
  /** Whether the guard made the box (and so closes it). */
  readonly ownsBox: boolean;
  /** `onRefused` and `onEscalated`, if either is set. */
  readonly hooks: GuardHooks | undefined;
  readonly onError: (error: unknown, req: IncomingMessage) => void;
  readonly eventLoop: EventLoopMonitor | undefined;
  /** Whether the guard started the monitor (and so stops it on close). */
  readonly ownsMonitor: boolean;
  readonly memory: MemoryMonitor | undefined;
  /** Whether the guard started the memory monitor (and so stops it on close). */
  readonly ownsMemory: boolean;
  readonly maxInFlight: number;
  /** Whether the client key goes on the diagnostics channels. */
  readonly publishKey: boolean;
  /** When handlers run inside the request's ambient context. */
  readonly ambient: AmbientMode;
}

/** Checks `o` and fills in the defaults; throws a `SpillwayConfigError` naming a bad option. */
export function guardSettings(o: AdmissionOptions): GuardSettings {
  if (typeof o !== 'object' || o === null) {
    throw new SpillwayConfigError('admission options', 'an options object', o);
  }
  const clock = o.clock ?? systemClock;
  const headerNames = headerNamesOf(o.headerNames);
  const exempt = o.exempt ?? ['/healthz', '/readyz', '/livez'];
  if (!Array.isArray(exempt) || exempt.some((p) => typeof p !== 'string')) {
    throw new SpillwayConfigError('exempt', 'an array of paths', exempt);
  }
  if (o.key !== undefined && typeof o.key !== 'function') {
    throw new SpillwayConfigError('key', 'a function of the request', o.key);
  }
  const trustProxy = o.trustProxy ?? false;
  if (typeof trustProxy !== 'boolean' && !(Number.isSafeInteger(trustProxy) && trustProxy >= 0)) {
    throw new SpillwayConfigError(
      'trustProxy',
      'a boolean or a number of trusted hops',
      trustProxy,
    );
  }
  const ipv6Prefix = o.ipv6Prefix ?? 56;
  if (!Number.isInteger(ipv6Prefix) || ipv6Prefix < 1 || ipv6Prefix > 128) {
    throw new SpillwayConfigError('ipv6Prefix', 'a whole number of bits from 1 to 128', ipv6Prefix);
  }
  const capacitySignal = o.capacitySignal ?? 'later';
  if (capacitySignal !== 'later' && capacitySignal !== 'elsewhere') {
    throw new SpillwayConfigError('capacitySignal', "'later' or 'elsewhere'", capacitySignal);
  }
  if (o.onError !== undefined && typeof o.onError !== 'function') {
    throw new SpillwayConfigError('onError', 'a function of the error and the request', o.onError);
  }
  const maxInFlight = o.maxInFlight ?? Infinity;
  if (maxInFlight !== Infinity && !(Number.isSafeInteger(maxInFlight) && maxInFlight >= 1)) {
    throw new SpillwayConfigError('maxInFlight', 'a whole number of 1 or more', maxInFlight);
  }
  const publishKey = o.publishKey ?? false;
  if (typeof publishKey !== 'boolean') {
    throw new SpillwayConfigError('publishKey', 'a boolean', publishKey);
  }
  return {
    clock,
    headerNames,
    exempt: new Set(exempt),
    key: o.key,
    trustProxy,
    ipv6Prefix,
    capacitySignal,
    ...boxOf(o.penaltyBox ?? {}, clock),
    hooks: guardHooks(o, { onError: o.onError ?? logFailure, log: logFailure }),
    onError: o.onError ?? logFailure,
    publishKey,
    ambient: ambientOption(o.ambientContext),
    ...monitorOf(o.eventLoop ?? false, clock),
    ...memoryOf(o.memory, clock),
    maxInFlight,
  };
}

/** The penalty box in use, and whether the guard made it. */
function boxOf(
  given: NonNullable<AdmissionOptions['penaltyBox']>,
  clock: Clock,
): Pick<GuardSettings, 'box' | 'ownsBox'> {
  if (given === false) return { box: undefined, ownsBox: false };
  if (typeof given !== 'object' || given === null) {
    throw new SpillwayConfigError('penaltyBox', 'false, penalty box options, or a box', given);
  }
  if (typeof (given as PenaltyBoxLike).check === 'function') {
    return { box: given as PenaltyBoxLike, ownsBox: false };
  }
  return { box: penaltyBox({ clock, ...(given as PenaltyBoxOptions) }), ownsBox: true };
}

/** The memory monitor in use, and whether the guard started it. */
function memoryOf(
  memory: AdmissionOptions['memory'],
  clock: Clock,
): Pick<GuardSettings, 'memory' | 'ownsMemory'> {
  if (memory === undefined) return { memory: undefined, ownsMemory: false };
  if (typeof memory !== 'object' || memory === null) {
    throw new SpillwayConfigError('memory', 'memory monitor options, or a monitor', memory);
  }
  if (typeof (memory as MemoryMonitor).shouldShed === 'function') {
    return { memory: memory as MemoryMonitor, ownsMemory: false };
  }
  return {
    memory: memoryMonitor({ clock, ...(memory as MemoryMonitorOptions) }),
    ownsMemory: true,
  };
}

/** The event-loop monitor in use, and whether the guard started it. */
function monitorOf(
  loop: NonNullable<AdmissionOptions['eventLoop']>,
  clock: Clock,
): Pick<GuardSettings, 'eventLoop' | 'ownsMonitor'> {
  if (loop === false) return { eventLoop: undefined, ownsMonitor: false };
  if (typeof loop === 'object' && typeof (loop as EventLoopMonitor).shouldShed === 'function') {
    return { eventLoop: loop as EventLoopMonitor, ownsMonitor: false };
  }
  const options = loop === true ? {} : (loop as EventLoopMonitorOptions);
  return { eventLoop: eventLoopMonitor({ clock, ...options }), ownsMonitor: true };
}

/** The default `onError`: one line on stderr, whatever was thrown. */
export function logFailure(error: unknown, req: IncomingMessage): void {
  let text: string;
  try {
    text = String(error);
  } catch {
    text = Object.prototype.toString.call(error);
  }
  process.stderr.write(`spillway: ${req.method} ${req.url} failed: ${text}\n`);
}
