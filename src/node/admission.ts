/**
 * The server side of the contract for node:http. For each request, cheapest check first and
 * all before the body is read: exempt route → penalty box → spent deadline → per-client quota
 * (429) → criticality shedding → per-route concurrency with a time-bounded line (503) → the
 * handler, with a signal that aborts on disconnect or deadline and the permit held until its
 * work settles → a dependency's overload mapped to the right signal for this caller.
 *
 * @module
 */
import { channel } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  criticalities,
  criticalityRank,
  penaltyBox,
  systemClock,
  type Clock,
  type PenaltyBox,
  type PenaltyBoxOptions,
  type Permit,
  type RateDecision,
  SpillwayConfigError,
} from '../index.js';
import {
  headerNamesOf,
  parseAttempt,
  parseCriticality,
  parseDeadlineMs,
  refusalFromError,
  refusalResponse,
  type HeaderNames,
  type Refusal,
  type RefusalResponse,
} from '../http/index.js';
import { clientAddress, type TrustProxy } from './client-address.js';
import {
  eventLoopMonitor,
  type EventLoopMonitor,
  type EventLoopMonitorOptions,
} from './event-loop-monitor.js';
import { Admitted, clientGone, type ContextInit, type RequestContext } from './request-context.js';
import { requestFields } from './request-fields.js';
import { logFailure, writeFailure } from './write-failure.js';
import { writeRefusal } from './write-refusal.js';
import {
  RouteTable,
  buildRoute,
  type Route,
  type RouteOptions,
  type RouteSettings,
} from './route.js';

/** Options of {@link admission}: defaults for every route, plus the routes. */
export interface AdmissionOptions extends RouteSettings {
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
  /** Paths that are never counted or limited. @default ['/healthz', '/readyz', '/livez'] */
  readonly exempt?: readonly string[];
  /** Per-route settings, tried in order after exact paths. */
  readonly routes?: readonly RouteOptions[];
  /** Escalation for clients that ignore 429s; `false` to turn off. @default {} (on, defaults) */
  readonly penaltyBox?: PenaltyBoxOptions | false;
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
   * Failures that are not overload, answered with 500: a handler's, or admission's own (a `key`
   * or route `match` function that threw). @default logs to stderr
   */
  readonly onError?: (error: unknown, req: IncomingMessage) => void;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** A request handler run under admission; return a promise that settles when the work is done. */
export type AdmittedHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  context: RequestContext,
) => unknown;

/** The outcome of {@link Admission.admit}. */
export type AdmitResult =
  /** Let through: run the work with `context`, then call `finish` (or `fail`). */
  | { readonly admitted: true; readonly context: Admitted; readonly exempt: false }
  /** An exempt route: run it, nothing to finish. */
  | { readonly admitted: true; readonly context: undefined; readonly exempt: true }
  /** Refused: write `response` (and close the connection if asked). */
  | {
      readonly admitted: false;
      readonly refusal: Refusal;
      readonly response: RefusalResponse;
      readonly closeConnection: boolean;
    }
  /**
   * Nothing (more) to write: the client went away while waiting, or admission itself failed
   * and the guard has already answered 500 through {@link Admission.fail}.
   */
  | {
      readonly admitted: false;
      readonly refusal: undefined;
      readonly response: undefined;
      readonly closeConnection: false;
    };

/** The guard. */
export interface Admission {
  /**
   * Decides for one request. Adapters use this; node:http users want {@link Admission.handle}.
   * Never throws or rejects: a failure inside it is answered with a 500 (see the result).
   */
  admit(
    req: IncomingMessage,
    res: ServerResponse,
    routeName?: string,
  ): AdmitResult | Promise<AdmitResult>;
  /** Wraps a node:http handler: refusals are written, admitted work runs with a context. */
  handle(handler: AdmittedHandler): (req: IncomingMessage, res: ServerResponse) => void;
  /** Runs an admitted request's handler and finishes it, answering a failure (see propagation). */
  run(handler: AdmittedHandler, context: Admitted): Promise<void>;
  /**
   * Answers a failed request: its overload signal if the error carries one, else a 500 (and
   * `onError` is told). Never throws.
   */
  fail(error: unknown, req: IncomingMessage, res: ServerResponse): void;
  /** Adds a route at run time (framework adapters register theirs); returns its name. */
  addRoute(options: RouteOptions): string;
  /** The live state of a route's limit (for metrics and tests). */
  stats(
    routeName?: string,
  ): { readonly active: number; readonly queued: number; readonly limit: number } | undefined;
  /** The header names in use. */
  readonly headerNames: HeaderNames;
  /** Admitted requests not yet finished, across routes. */
  readonly inflight: number;
  /** The event-loop monitor in use, if any. */
  readonly eventLoop: EventLoopMonitor | undefined;
  /** Stops background work (the event-loop monitor the guard started). Idempotent. */
  close(): void;
}

/** Subscribe to see every refusal (published only when someone listens). */
export const refusalChannel = channel('spillway:http:refusal');

const defaultRouteName = 'default';

/**
 * Creates the guard.
 *
 * @example
 * const guard = admission({ limit: 10, maxQueue: 10, maxQueueWaitMs: 50, quota: { ratePerSec: 150, burst: 15 } });
 * http.createServer(guard.handle(async (req, res, { signal }) => {
 *   res.end(await db.query(sql, { signal }));
 * })).listen(8080);
 */
export function admission(options: AdmissionOptions = {}): Admission {
  if (typeof options !== 'object' || options === null) {
    throw new SpillwayConfigError('admission options', 'an options object', options);
  }
  return new Guard(options);
}

class Guard implements Admission {
  readonly headerNames: HeaderNames;
  readonly #o: AdmissionOptions;
  readonly #clock: Clock;
  readonly #routes: RouteTable;
  readonly #exempt: ReadonlySet<string>;
  readonly #box: PenaltyBox | undefined;
  readonly #capacitySignal: 'later' | 'elsewhere';
  readonly #onError: (error: unknown, req: IncomingMessage) => void;
  readonly eventLoop: EventLoopMonitor | undefined;
  readonly #ownsMonitor: boolean;
  #inflight = 0;
  #unnamed = 0;
  readonly #onFinish = (context: Admitted): void => {
    this.#inflight--;
    this.eventLoop?.onComplete(this.#clock.now() - context.startedAt);
  };

  constructor(o: AdmissionOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.headerNames = headerNamesOf(o.headerNames);
    const exempt = o.exempt ?? ['/healthz', '/readyz', '/livez'];
    if (!Array.isArray(exempt) || exempt.some((p) => typeof p !== 'string')) {
      throw new SpillwayConfigError('exempt', 'an array of paths', exempt);
    }
    this.#exempt = new Set(exempt);
    if (o.key !== undefined && typeof o.key !== 'function') {
      throw new SpillwayConfigError('key', 'a function of the request', o.key);
    }
    const trust = o.trustProxy ?? false;
    if (typeof trust !== 'boolean' && !(Number.isSafeInteger(trust) && trust >= 0)) {
      throw new SpillwayConfigError('trustProxy', 'a boolean or a number of trusted hops', trust);
    }
    const signal = o.capacitySignal ?? 'later';
    if (signal !== 'later' && signal !== 'elsewhere') {
      throw new SpillwayConfigError('capacitySignal', "'later' or 'elsewhere'", signal);
    }
    this.#capacitySignal = signal;
    this.#box =
      o.penaltyBox === false ? undefined : penaltyBox({ clock: this.#clock, ...o.penaltyBox });
    if (o.onError !== undefined && typeof o.onError !== 'function') {
      throw new SpillwayConfigError(
        'onError',
        'a function of the error and the request',
        o.onError,
      );
    }
    this.#onError = o.onError ?? logFailure;
    const loop = o.eventLoop ?? false;
    if (loop === false) {
      this.eventLoop = undefined;
      this.#ownsMonitor = false;
    } else if (
      typeof loop === 'object' &&
      typeof (loop as EventLoopMonitor).shouldShed === 'function'
    ) {
      this.eventLoop = loop as EventLoopMonitor;
      this.#ownsMonitor = false;
    } else {
      this.eventLoop = eventLoopMonitor({
        clock: this.#clock,
        ...(loop === true ? {} : (loop as EventLoopMonitorOptions)),
      });
      this.#ownsMonitor = true;
    }
    this.#routes = new RouteTable(
      buildRoute(defaultRouteName, {}, { base: o, clock: this.#clock }),
    );
    for (const route of o.routes ?? []) this.addRoute(route);
  }

  addRoute(options: RouteOptions): string {
    if (typeof options !== 'object' || options === null) {
      throw new SpillwayConfigError('routes[]', 'a route options object', options);
    }
    const name =
      options.name ??
      (typeof options.match === 'string' ? options.match : `route-${++this.#unnamed}`);
    const route = buildRoute(name, options, { base: this.#o, clock: this.#clock });
    this.#routes.add(options.match, options.method?.toUpperCase(), route);
    return name;
  }

  get inflight(): number {
    return this.#inflight;
  }

  close(): void {
    if (this.#ownsMonitor) this.eventLoop?.close();
  }

  stats(
    routeName = defaultRouteName,
  ): { active: number; queued: number; limit: number } | undefined {
    const limiter = this.#routes.byName(routeName)?.limiter;
    return limiter === undefined
      ? undefined
      : { active: limiter.active, queued: limiter.queued, limit: limiter.limit };
  }

  handle(handler: AdmittedHandler): (req: IncomingMessage, res: ServerResponse) => void {
    if (typeof handler !== 'function')
      throw new SpillwayConfigError('handler', 'a function', handler);
    return (req, res) => {
      const result = this.admit(req, res);
      // `admit` never rejects, and `#dispatch` answers its own failures.
      if ('then' in result) void result.then((r) => this.#dispatch(handler, { req, res }, r));
      else this.#dispatch(handler, { req, res }, result);
    };
  }

  async run(handler: AdmittedHandler, context: Admitted): Promise<void> {
    let failure: { error: unknown } | undefined;
    try {
      await handler(context.req, context.res, context);
    } catch (error) {
      failure = { error };
      this.fail(error, context.req, context.res);
    } finally {
      context.settle(failure);
    }
  }

  admit(
    req: IncomingMessage,
    res: ServerResponse,
    routeName?: string,
  ): AdmitResult | Promise<AdmitResult> {
    // User code runs in here (a key or match function, a store, a monitor): whatever it throws
    // is answered with a 500 here, never thrown out of a request listener.
    try {
      const result = this.#decide(req, res, routeName);
      return 'then' in result
        ? result.then(undefined, (e: unknown) => this.#failed(e, req, res))
        : result;
    } catch (error) {
      return this.#failed(error, req, res);
    }
  }

  #failed(error: unknown, req: IncomingMessage, res: ServerResponse): AdmitResult {
    this.fail(error, req, res);
    return gone;
  }

  #decide(
    req: IncomingMessage,
    res: ServerResponse,
    routeName: string | undefined,
  ): AdmitResult | Promise<AdmitResult> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    // A route the caller named (a framework adapter's) is never exempt by path.
    if (routeName === undefined && this.#exempt.has(path)) return exemptResult;
    const route =
      (routeName === undefined ? undefined : this.#routes.byName(routeName)) ??
      this.#routes.resolve(req, path);
    if (route.exempt) return exemptResult;

    // The client key (a socket lookup, or the user's function) and the clock are read only
    // when something needs them: a refusal for capacity needs neither.
    const p: Pending = {
      route,
      req,
      res,
      key: undefined,
      askedMs: undefined,
      rank: 0,
      attempt: 1,
      arrivedAt: undefined,
    };
    const box = this.#box;
    if (box !== undefined) {
      const verdict = box.check(this.#keyFor(p));
      if (verdict !== undefined) {
        return this.#refuse(
          { reason: verdict.reason, retryAfterMs: verdict.retryAfterMs },
          p,
          verdict.closeConnection,
        );
      }
    }

    const fields = requestFields(req, this.headerNames);
    const askedMs = parseDeadlineMs(fields.deadline);
    if (askedMs === 0) return this.#refuse({ reason: 'deadline' }, p);
    p.askedMs = askedMs;
    const claimed = parseCriticality(fields.criticality);
    if (claimed === undefined) p.rank = criticalityRank(route.defaultCriticality);
    else {
      // A client never raises itself above the route's ceiling.
      const rank = criticalityRank(claimed);
      p.rank = rank < route.ceilingRank ? route.ceilingRank : rank;
    }
    p.attempt = parseAttempt(fields.attempt) ?? 1;
    const quota = route.quota;
    if (quota !== undefined) {
      const decision = quota.tryTake(this.#keyFor(p));
      if ('then' in decision) {
        // The deadline counts from arrival, not from when a remote store answered (and a set
        // `arrivedAt` tells the next step the client may have left in the meantime).
        p.arrivedAt = this.#clock.now();
        return Promise.resolve(decision).then((d) => this.#afterQuota(d, p));
      }
      return this.#afterQuota(decision, p);
    }
    return this.#acquire(p);
  }

  #afterQuota(d: RateDecision, p: Pending): AdmitResult | Promise<AdmitResult> {
    if (!d.ok && d.reason === 'store-unavailable') {
      // The shared store is down and its policy is to refuse: not this client's fault.
      return this.#refuse({ reason: 'unavailable' }, p);
    }
    if (!d.ok) {
      this.#box?.refused(this.#keyFor(p), d.retryAfterMs);
      return this.#refuse(
        {
          reason: 'quota',
          retryAfterMs: d.retryAfterMs,
          quota: {
            name: p.route.quotaName,
            ratePerSec: p.route.quota!.policy.ratePerSec,
            burst: d.limit,
            remaining: d.remaining,
            resetMs: d.resetMs,
            policyField: p.route.quotaPolicyField,
          },
        },
        p,
      );
    }
    return this.#acquire(p);
  }

  #acquire(p: Pending): AdmitResult | Promise<AdmitResult> {
    const { route, rank, res } = p;
    // After an asynchronous step its `close` has come and gone: no slot, no line for it.
    if (p.arrivedAt !== undefined && clientGone(res)) return gone;
    const criticality = criticalities[rank]!;
    const loop = this.eventLoop;
    if (loop !== undefined && loop.shouldShed(criticality, this.#inflight)) {
      return this.#refuse({ reason: 'overloaded', retryAfterMs: 1_000 }, p);
    }
    const limiter = route.limiter;
    if (limiter === undefined) return this.#admitted(new Admitted(this.#init(p)).start(undefined));
    const now = limiter.tryAcquire();
    if (now.ok) return this.#start(p, now.permit);
    if (route.maxQueue === 0) {
      return this.#refuse(
        { reason: 'capacity', signal: this.#capacitySignal, retryAfterMs: now.retryAfterMs },
        p,
      );
    }
    const allowance = route.lineAllowance[rank]!;
    if (allowance < route.maxQueue && limiter.queued >= allowance) {
      // This criticality's share of the line is used up: shed it, keep room for more critical work.
      return this.#refuse({ reason: 'shed', retryAfterMs: now.retryAfterMs }, p);
    }
    if (!limiter.hasRoom(criticality)) {
      // A full line with nobody to displace: refuse now, allocating nothing for the wait.
      return this.#refuse(
        { reason: 'capacity', signal: this.#capacitySignal, retryAfterMs: now.retryAfterMs },
        p,
      );
    }
    // Wait in line; leave it at once if the client goes away.
    const init = this.#init(p);
    const controller = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) controller.abort();
    };
    res.once('close', onClose);
    return limiter
      .acquire({ signal: controller.signal, criticality, deadline: init.expiresAt })
      .then((r): AdmitResult => {
        res.removeListener('close', onClose);
        if (r.ok) {
          if (controller.signal.aborted || clientGone(res)) {
            r.permit.release('ignored');
            return gone;
          }
          return this.#admitted(new Admitted(init, controller).start(r.permit));
        }
        switch (r.reason) {
          case 'aborted':
            return gone;
          case 'deadline':
            return this.#refuse({ reason: 'deadline' }, p);
          case 'shed':
            return this.#refuse({ reason: 'shed', retryAfterMs: r.retryAfterMs }, p);
          default:
            return this.#refuse(
              { reason: 'capacity', signal: this.#capacitySignal, retryAfterMs: r.retryAfterMs },
              p,
            );
        }
      });
  }

  /** Starts a context on a permit just taken, giving the permit back if that fails. */
  #start(p: Pending, permit: Permit): AdmitResult {
    let init: ContextInit;
    try {
      // Built after the permit, so a capacity refusal never pays for the key or the clock.
      init = this.#init(p);
    } catch (error) {
      permit.release('ignored');
      throw error;
    }
    return this.#admitted(new Admitted(init).start(permit));
  }

  /** What an admitted (or waiting) request's context starts from. */
  #init(p: Pending): ContextInit {
    const now = p.arrivedAt ?? this.#clock.now();
    const route = p.route;
    const asked = p.askedMs;
    const routeExpiresAt = now + route.deadlineMs;
    return {
      clock: this.#clock,
      expiresAt: asked !== undefined && asked < route.deadlineMs ? now + asked : routeExpiresAt,
      routeExpiresAt,
      criticality: criticalities[p.rank]!,
      attempt: p.attempt,
      key: this.#keyFor(p),
      route: route.name,
      req: p.req,
      res: p.res,
      startedAt: now,
      onFinish: this.#onFinish,
    };
  }

  #admitted(context: Admitted): AdmitResult {
    this.#inflight++;
    return { admitted: true, context, exempt: false };
  }

  /** The client key of the request, worked out once. */
  #keyFor(p: Pending): string {
    if (p.key !== undefined) return p.key;
    const custom = this.#o.key;
    if (custom !== undefined) {
      const k = custom(p.req);
      if (typeof k === 'string' && k.length > 0 && k.length <= 256) return (p.key = k);
    }
    return (p.key = clientAddress(p.req, this.#o.trustProxy ?? false));
  }

  #refuse(refusal: Refusal, p: Pending, closeConnection = false): AdmitResult {
    const response = refusalResponse(refusal, this.headerNames);
    if (refusalChannel.hasSubscribers) {
      refusalChannel.publish({
        reason: refusal.reason,
        status: response.status,
        signal: response.signal,
        route: p.route.name,
        key: this.#keyFor(p),
      });
    }
    return { admitted: false, refusal, response, closeConnection };
  }

  #dispatch(
    handler: AdmittedHandler,
    { req, res }: { req: IncomingMessage; res: ServerResponse },
    result: AdmitResult,
  ): void {
    if (result.admitted) {
      if (result.exempt) {
        try {
          const out = handler(req, res, exemptContext(this.#clock));
          if (isThenable(out)) out.then(undefined, (error: unknown) => this.fail(error, req, res));
        } catch (error) {
          this.fail(error, req, res);
        }
        return;
      }
      void this.run(handler, result.context);
      return;
    }
    if (result.response === undefined) return;
    try {
      writeRefusal(res, result.response, result.closeConnection);
    } catch (error) {
      this.fail(error, req, res);
    }
  }

  fail(error: unknown, req: IncomingMessage, res: ServerResponse): void {
    const refusal = refusalFromError(error);
    if (refusal === undefined) {
      try {
        this.#onError(error, req);
      } catch (thrown) {
        logFailure(thrown, req);
      }
    }
    if (refusal === undefined || res.headersSent || res.destroyed) {
      writeFailure(res);
      return;
    }
    try {
      writeRefusal(res, refusalResponse(refusal, this.headerNames), false);
    } catch {
      writeFailure(res);
    }
  }
}

/** A request between checks; fields are filled in as the checks need them. */
interface Pending {
  readonly route: Route;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  key: string | undefined;
  /** `Spillway-Deadline` as asked, in ms. */
  askedMs: number | undefined;
  rank: number;
  attempt: number;
  /** When the request arrived on the guard's clock, if it was needed before admission. */
  arrivedAt: number | undefined;
}

const exemptResult: AdmitResult = Object.freeze({
  admitted: true,
  context: undefined,
  exempt: true,
});
const gone: AdmitResult = Object.freeze({
  admitted: false,
  refusal: undefined,
  response: undefined,
  closeConnection: false,
});

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

const neverAborted = new AbortController().signal;

/** Exempt routes get a context too (no limits, no deadline), so handlers need not branch. */
function exemptContext(clock: Clock): RequestContext {
  return {
    signal: neverAborted,
    expiresAt: Infinity,
    remainingMs: () => Infinity,
    criticality: 'critical',
    attempt: 1,
    key: '',
    route: 'exempt',
    clock,
  };
}
