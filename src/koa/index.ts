/**
 * `spillway/koa`: Koa 2 and 3 middleware over the node admission guard. Koa is a type-only
 * import and an optional peer dependency.
 *
 * - `app.use(guard)` guards every request after it, by the guard's `routes` (matched on the
 *   path) and `exempt` paths; `guard.route(settings)` is the same middleware for one route of a
 *   router (`router.get('/orders', guard.route({ limit: 5 }), handler)`), with its own limit,
 *   line, quota and deadline.
 * - Koa's middleware awaits what follows it, so the guard sees the work end: the slot is held
 *   until the middleware after it has settled and the response has ended, or the client has
 *   gone (`src/node/settle-after-response.ts`).
 * - `ctx.state.spillway` is the request's context: the signal to pass down (it aborts on
 *   disconnect and at the deadline), the criticality, `remainingMs()`.
 * - A refusal is written by the same step as node:http's (`writeRefusal`, on `ctx.res`), and
 *   Koa's own response turned off (`ctx.respond = false`); the middleware before the guard
 *   (a logger) reads its status from `ctx.status` as usual. A dependency's overload thrown downstream is answered the same
 *   way (`answer-failure.ts`); any other error goes on up to Koa's error handling.
 * - A failure inside admission itself (a `key` function that throws) is answered 500 by the
 *   guard, on the raw response, exactly as node:http and Express answer it.
 *
 * @module
 */
import type { DefaultContext, Middleware, Next, ParameterizedContext } from 'koa';
import { systemClock } from '../index.js';
import {
  admission,
  writeRefusal,
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

/** What the guard puts on `ctx.state`. */
export interface SpillwayState {
  /** The request's context: set on every request the guard let through (exempt ones too). */
  spillway: RequestContext;
}

/** The Koa context the guard works with. */
export type SpillwayContext = ParameterizedContext<SpillwayState, DefaultContext>;

/** The Koa guard: use it as middleware, or make a route's middleware with `route`. */
export interface KoaGuard extends Middleware<SpillwayState> {
  /**
   * Middleware for one route, with its own settings (limit, line, quota, deadline, criticality);
   * `name` names it in refusals, metrics and `RateLimit-Policy`. @default `koa-route-<n>`
   */
  route(settings?: RouteSettings & { readonly name?: string }): Middleware<SpillwayState>;
  /** The underlying node guard (stats, routes, `close`). */
  readonly admission: Admission;
}

/**
 * Creates the Koa guard.
 *
 * @example
 * const guard = spillway({ limit: 10, maxQueue: 10, maxQueueWaitMs: 50 });
 * app.use(guard);
 * app.use(async (ctx) => {
 *   ctx.body = await db.orders({ signal: ctx.state.spillway.signal });
 * });
 */
export function spillway(options: AdmissionOptions = {}): KoaGuard {
  const guard = admission(options);
  const answerer = koaAnswerer(guard);
  // What follows the guard runs in the request's ambient context.
  const ambient = ambientOption(options.ambientContext);
  const exempt = exemptContext(options.clock ?? systemClock);
  let routes = 0;

  /** Runs what follows under the admitted context, answering a dependency's overload. */
  const run = async (ctx: SpillwayContext, next: Next, context: Admitted): Promise<void> => {
    ctx.state.spillway = context;
    try {
      await runAdmitted(ambient, context, next);
    } catch (error) {
      if (answerFailure({ error, context }, ctx, answerer)) return;
      throw error;
    }
    settleAfterResponse(context, ctx.res);
  };

  const decide = (ctx: SpillwayContext, next: Next, result: AdmitResult): unknown => {
    if (result.admitted) {
      if (result.exempt) {
        ctx.state.spillway = exempt;
        return next();
      }
      return run(ctx, next, result.context);
    }
    // Nothing for Koa to write: refused here, or the client left, or the guard answered a failure.
    ctx.respond = false;
    if (result.response !== undefined) {
      try {
        writeRefusal(ctx.res, result.response, result.closeConnection);
      } catch (error) {
        guard.fail(error, ctx.req, ctx.res);
      }
    }
    return undefined;
  };

  const guarded =
    (route: string | undefined): Middleware<SpillwayState> =>
    (ctx, next) => {
      const result = guard.admit(ctx.req, ctx.res, route);
      return 'then' in result
        ? result.then((r) => decide(ctx, next, r))
        : decide(ctx, next, result);
    };

  const middleware = guarded(undefined) as KoaGuard;
  // Through a local, not assigned as a literal: see noPretenuredClosure in eslint.config.js.
  const route: KoaGuard['route'] = (settings = {}) =>
    guarded(
      guard.addRoute({ ...settings, name: settings.name ?? `koa-route-${++routes}`, match: never }),
    );
  middleware.route = route;
  Object.defineProperty(middleware, 'admission', { value: guard, enumerable: true });
  return middleware;
}

/** Routes added by `route` are taken by name, never by matching a path. */
const never = (): boolean => false;

/**
 * How the Koa guard answers a failed downstream: refusals on the raw response, and failures that
 * are not overload (or come after the answer began) left to Koa's error handling.
 */
function koaAnswerer(guard: Admission): Answerer<SpillwayContext> {
  return {
    headerNames: guard.headerNames,
    contextOf: (ctx) => ctx.state.spillway,
    canAnswer: (ctx) => !ctx.headerSent,
    write: (ctx, response) => {
      ctx.respond = false;
      writeRefusal(ctx.res, response, false);
    },
  };
}
