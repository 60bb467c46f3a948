/**
 * The server side of the contract for node:http. For each request, cheapest check first and
 * all before the body is read: exempt route → penalty box → spent deadline → per-client quota
 * (429) → criticality shedding → per-route concurrency with a time-bounded line (503) → the
 * handler, with a signal that aborts on disconnect or deadline and the permit held until its
 * work settles → a dependency's overload mapped to the right signal for this caller.
 *
 * The rooms: the options (`admission-options.ts`), the checks (`checks.ts`, with the wait in
 * line in `wait-in-line.ts` and the process-wide checks in `process-checks.ts`), the admitted
 * request (`request-context.ts`), and the one answer to a failure (`answer-failure.ts`). This
 * file is the guard as users hold it.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpillwayConfigError, type PenaltyBoxLike, type Subscription } from '../index.js';
import type { HeaderNames } from '../http/index.js';
import { bridgeLimit } from '../channels/bridges.js';
import { penaltyChannel } from '../channels/channels.js';
import { guardSettings, type AdmissionOptions, type GuardSettings } from './admission-options.js';
import { callHandler, withAmbient } from './ambient.js';
import { answerFailure, nodeAnswerer, type Answerer, type NodeExchange } from './answer-failure.js';
import { gone, type AdmitResult } from './admit-result.js';
import { Checks } from './checks.js';
import { quotaKeys, type QuotaKeys } from './quota-keys.js';
import type { EventLoopMonitor } from './event-loop-monitor.js';
import { exemptContext, type Admitted, type RequestContext } from './request-context.js';
import { writeRefusal } from './write-refusal.js';
import { RouteTable, buildRoute, type Route, type RouteOptions } from './route.js';
import { watchStorm } from './storm-signal.js';
import { runTraced, traced } from './trace-request.js';

/** A request handler run under admission; return a promise that settles when the work is done. */
export type AdmittedHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  context: RequestContext,
) => unknown;

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
  /** The names of the guard's routes, the default route's first (for metrics). */
  routeNames(): readonly string[];
  /**
   * Key management on a route's quota: `get`, `reset`, `penalize`, `reward` a client key,
   * under every policy of the route (see `QuotaKeys`); undefined for a route without a quota.
   * @default routeName the default route
   */
  quota(routeName?: string): QuotaKeys | undefined;
  /**
   * Suspends a client key until {@link Admission.lift}: every request refused (429, retry
   * `never`), on every replica with a shared box. Rejects when the guard has no penalty box.
   */
  suspend(key: string): Promise<void>;
  /** Lets a client key out of the penalty box altogether: no suspension, no step. */
  lift(key: string): Promise<void>;
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
  /**
   * Stops background work (the event-loop monitor the guard started) and stops publishing an
   * adaptive limit's moves on `spillway:limit:change` and the routes' retry-storm flips on
   * `spillway:retry-storm`. Idempotent.
   */
  close(): void;
}

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
  return new Guard(options);
}

class Guard implements Admission {
  readonly headerNames: HeaderNames;
  readonly eventLoop: EventLoopMonitor | undefined;
  readonly #o: AdmissionOptions;
  readonly #s: GuardSettings;
  readonly #routes: RouteTable;
  readonly #checks: Checks;
  readonly #answerer: Answerer<NodeExchange>;
  /** Bridges from the guard's primitives to the channels, ended by `close`. */
  readonly #watches: Subscription[] = [];
  #unnamed = 0;

  constructor(o: AdmissionOptions) {
    this.#s = guardSettings(o);
    this.#o = o;
    this.headerNames = this.#s.headerNames;
    this.eventLoop = this.#s.eventLoop;
    this.#answerer = nodeAnswerer(this.#s);
    this.#routes = new RouteTable(
      buildRoute(defaultRouteName, {}, { base: o, clock: this.#s.clock }),
    );
    this.#checks = new Checks(this.#s, this.#routes);
    this.#watch(bridgeLimit({ route: defaultRouteName }, o.limit));
    this.#watchStorm(this.#routes.fallback);
    this.#watchPenalties();
    for (const route of o.routes ?? []) this.addRoute(route);
  }

  addRoute(options: RouteOptions): string {
    if (typeof options !== 'object' || options === null) {
      throw new SpillwayConfigError('routes[]', 'a route options object', options);
    }
    const name =
      options.name ??
      (typeof options.match === 'string' ? options.match : `route-${++this.#unnamed}`);
    const route = buildRoute(name, options, { base: this.#o, clock: this.#s.clock });
    this.#routes.add(options.match, options.method?.toUpperCase(), route);
    this.#watch(bridgeLimit({ route: name }, options.limit ?? this.#o.limit));
    this.#watchStorm(route);
    return name;
  }

  routeNames(): readonly string[] {
    return this.#routes.names();
  }

  get inflight(): number {
    return this.#checks.inflight;
  }

  close(): void {
    if (this.#s.ownsBox) this.#s.box?.close();
    if (this.#s.ownsMonitor) this.eventLoop?.close();
    if (this.#s.ownsMemory) this.#s.memory?.close();
    for (const w of this.#watches.splice(0)) w.dispose();
  }

  quota(routeName = defaultRouteName): QuotaKeys | undefined {
    const quota = this.#routes.byName(routeName)?.quota;
    return quota === undefined ? undefined : quotaKeys(quota);
  }

  async suspend(key: string): Promise<void> {
    await this.#box('suspend').suspend(key);
  }

  async lift(key: string): Promise<void> {
    await this.#box('lift').lift(key);
  }

  #box(method: string): PenaltyBoxLike {
    const box = this.#s.box;
    if (box === undefined) {
      throw new SpillwayConfigError('penaltyBox', `a penalty box (${method} needs one)`, false);
    }
    return box;
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
    const ambient = this.#s.ambient;
    if (traced()) return runTraced(withAmbient(ambient, handler), context, this.#answerer);
    try {
      await callHandler(ambient, handler, context);
    } catch (error) {
      answerFailure({ error, context }, context, this.#answerer);
      return;
    }
    context.settle();
  }

  admit(
    req: IncomingMessage,
    res: ServerResponse,
    routeName?: string,
  ): AdmitResult | Promise<AdmitResult> {
    // User code runs in here (a key or match function, a store, a monitor): whatever it throws
    // is answered with a 500 here, never thrown out of a request listener.
    try {
      const result = this.#checks.decide(req, res, routeName);
      return 'then' in result
        ? result.then(undefined, (e: unknown) => this.#failed(e, req, res))
        : result;
    } catch (error) {
      return this.#failed(error, req, res);
    }
  }

  fail(error: unknown, req: IncomingMessage, res: ServerResponse): void {
    answerFailure({ error }, { req, res }, this.#answerer);
  }

  #failed(error: unknown, req: IncomingMessage, res: ServerResponse): AdmitResult {
    this.fail(error, req, res);
    return gone;
  }

  #dispatch(handler: AdmittedHandler, exchange: NodeExchange, result: AdmitResult): void {
    const { req, res } = exchange;
    if (result.admitted) {
      if (!result.exempt) {
        void this.run(handler, result.context);
        return;
      }
      try {
        const out = handler(req, res, exemptContext(this.#s.clock));
        if (isThenable(out)) out.then(undefined, (error: unknown) => this.fail(error, req, res));
      } catch (error) {
        this.fail(error, req, res);
      }
      return;
    }
    if (result.response === undefined) return;
    try {
      writeRefusal(res, result.response, result.closeConnection);
    } catch (error) {
      this.fail(error, req, res);
    }
  }

  #watch(subscription: Subscription | undefined): void {
    if (subscription !== undefined) this.#watches.push(subscription);
  }

  /** Publishes a route's retry-storm flips on `spillway:retry-storm`. */
  #watchStorm(route: Route): void {
    if (route.storm !== undefined) this.#watch(watchStorm(route.name, route.storm));
  }

  /** Publishes the penalty box's steps on `spillway:penalty` (the key only if asked). */
  #watchPenalties(): void {
    const box = this.#s.box;
    if (box === undefined) return;
    const publishKey = this.#s.publishKey;
    const hooks = this.#s.hooks;
    this.#watch(
      box.onStepChange((event) => {
        hooks?.escalated(event);
        if (!penaltyChannel.hasSubscribers) return;
        const { key, step, previous } = event;
        penaltyChannel.publish(publishKey ? { step, previous, key } : { step, previous });
      }),
    );
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
