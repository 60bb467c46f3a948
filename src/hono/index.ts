/**
 * `spillway/hono`: Hono 4 middleware over the node admission guard, for apps served by
 * `@hono/node-server` (HTTP/1.1). Hono is a type-only import and an optional peer dependency.
 *
 * - Admission reads the node request under Hono's Web-standard one (`c.env.incoming`, which
 *   `@hono/node-server` passes in): the guard's checks, client key and disconnect watch are
 *   node:http's, decided before the body is read.
 * - `app.use(guard)` guards every request after it, by the guard's `routes` (matched on the
 *   path) and `exempt` paths; `guard.route(settings)` is the same middleware for one route
 *   (`app.get('/orders', guard.route({ limit: 5 }), handler)`), with its own settings.
 * - `c.var.spillway` (or `c.get('spillway')`) is the request's context: the signal to pass down
 *   (it aborts on disconnect and at the deadline), the criticality, `remainingMs()`.
 * - A refusal is a Web-standard Response from the guard's refusal table (`c.body`, so headers
 *   set before the guard — CORS, say — stay on it, and the middleware before it sees it): the
 *   same status, fields and problem+json body as node:http's. A dependency's overload thrown
 *   downstream (`c.error`, after Hono's `onError`) is answered the same way.
 * - The slot is held until the middleware after the guard has settled and the response has
 *   ended on the socket, or the client has gone (`src/node/settle-after-response.ts`).
 * - A failure inside admission itself (a `key` function that throws) is answered 500 by the
 *   guard on the raw response, exactly as node:http and Express answer it, and Hono is told that
 *   the response was sent.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { systemClock } from '../index.js';
import type { RefusalResponse } from '../http/index.js';
import {
  admission,
  type Admission,
  type AdmissionOptions,
  type AdmitResult,
  type Admitted,
  type RequestContext,
  type RouteSettings,
} from '../node/index.js';
import { ambientOption, runAdmitted } from '../node/ambient.js';
import { answerFailure, type Answerer } from '../node/answer-failure.js';
import { exemptContext } from '../node/request-context.js';
import { settleAfterResponse } from '../node/settle-after-response.js';

/** What `@hono/node-server` passes as `c.env` (its `HttpBindings`). */
export interface NodeBindings {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
}

/** The Hono environment the guard works in: `new Hono<SpillwayEnv>()`. */
export interface SpillwayEnv {
  Bindings: NodeBindings;
  Variables: {
    /** The request's context: set on every request the guard let through (exempt ones too). */
    spillway: RequestContext;
  };
}

/** The Hono guard: use it as middleware, or make a route's middleware with `route`. */
export interface HonoGuard extends MiddlewareHandler<SpillwayEnv> {
  /**
   * Middleware for one route, with its own settings (limit, line, quota, deadline, criticality);
   * `name` names it in refusals, metrics and `RateLimit-Policy`. @default `hono-route-<n>`
   */
  route(settings?: RouteSettings & { readonly name?: string }): MiddlewareHandler<SpillwayEnv>;
  /** The underlying node guard (stats, routes, `close`). */
  readonly admission: Admission;
}

type Ctx = Context<SpillwayEnv>;

/**
 * Creates the Hono guard.
 *
 * @example
 * const app = new Hono<SpillwayEnv>();
 * app.use(spillway({ limit: 10, maxQueue: 10, maxQueueWaitMs: 50 }));
 * app.get('/orders', async (c) => c.json(await db.orders({ signal: c.var.spillway.signal })));
 * serve({ fetch: app.fetch, port: 8080 });
 */
export function spillway(options: AdmissionOptions = {}): HonoGuard {
  const guard = admission(options);
  const answerer = honoAnswerer(guard);
  // What follows the guard runs in the request's ambient context.
  const ambient = ambientOption(options.ambientContext);
  const exempt = exemptContext(options.clock ?? systemClock);
  let routes = 0;

  /** Runs what follows under the admitted context, answering a dependency's overload. */
  const run = async (c: Ctx, next: Next, context: Admitted): Promise<void> => {
    c.set('spillway', context);
    await runAdmitted(ambient, context, next);
    // Hono has caught what the handler threw, and given it to `onError`.
    const error: unknown = c.error;
    if (error !== undefined) answerFailure({ error, context }, c, answerer);
    else settleAfterResponse(context, c.env.outgoing);
  };

  const decide = (c: Ctx, next: Next, result: AdmitResult): Promise<void> | Response => {
    if (result.admitted) {
      if (result.exempt) {
        c.set('spillway', exempt);
        return next();
      }
      return run(c, next, result.context);
    }
    if (result.response !== undefined) {
      return refusalOf(c, result.response, result.closeConnection);
    }
    // The client left while waiting, or the guard answered a failure on the raw response.
    return alreadySent();
  };

  const guarded =
    (route: string | undefined): MiddlewareHandler<SpillwayEnv> =>
    (c, next) => {
      const env = c.env as Partial<NodeBindings> | undefined;
      if (env?.incoming === undefined || env.outgoing === undefined) {
        throw new Error(
          'spillway/hono needs the app served by @hono/node-server: c.env.incoming is missing',
        );
      }
      const result = guard.admit(env.incoming, env.outgoing, route);
      const out: Promise<Response | void> | Response =
        'then' in result
          ? result.then<Response | void>((r) => decide(c, next, r))
          : decide(c, next, result);
      // A refusal is returned as it is, not wrapped in a promise: Hono awaits what it gets.
      return out as Promise<Response | void>;
    };

  const middleware = guarded(undefined) as HonoGuard;
  // Through a local, not assigned as a literal: see noPretenuredClosure in eslint.config.js.
  const route: HonoGuard['route'] = (settings = {}) =>
    guarded(
      guard.addRoute({
        ...settings,
        name: settings.name ?? `hono-route-${++routes}`,
        match: never,
      }),
    );
  middleware.route = route;
  Object.defineProperty(middleware, 'admission', { value: guard, enumerable: true });
  return middleware;
}

/** Routes added by `route` are taken by name, never by matching a path. */
const never = (): boolean => false;

/** The refusal as a Web-standard Response through Hono's context (headers set before kept). */
function refusalOf(c: Ctx, response: RefusalResponse, closeConnection: boolean): Response {
  const fields: Record<string, string> = {};
  const h = response.headers;
  for (let i = 0; i < h.length; i += 2) fields[h[i]!] = h[i + 1]!;
  if (closeConnection) fields['connection'] = 'close';
  return c.body(response.body, response.status, fields);
}

/**
 * The runtime's own Response class, taken when this module loads: `@hono/node-server` puts a
 * lighter one of its own in its place once it serves, and writes the fields of that one's
 * responses without looking at them, where it honours the mark below only on a runtime one.
 */
const WebResponse = globalThis.Response;

/**
 * Tells `@hono/node-server` that the response went out on the raw socket already (its
 * `RESPONSE_ALREADY_SENT`, made here so that importing this module does not need the package).
 */
function alreadySent(): Response {
  return new WebResponse(null, { headers: { 'x-hono-already-sent': 'true' } });
}

/**
 * How the Hono guard answers a failed downstream: the refusal replaces the response `onError`
 * made; failures that are not overload keep that response.
 */
function honoAnswerer(guard: Admission): Answerer<Ctx> {
  return {
    headerNames: guard.headerNames,
    contextOf: (c) => c.var.spillway,
    canAnswer: (c) => !c.env.outgoing.headersSent,
    write: (c, response) => {
      // Unset first: assigning over a response merges the old one's fields into the new one.
      c.res = undefined;
      c.res = refusalOf(c, response, false);
    },
  };
}
