/**
 * `spillway/express`: Express 5 middleware over the node admission guard. Express is a
 * type-only import and an optional peer dependency.
 *
 * Two ways to guard work:
 * - `guard.route(handler)` wraps a route handler: its permit is held until the handler's promise
 *   settles — the exact contract. Prefer it for anything that calls a dependency.
 * - `app.use(guard)` guards every following route: Express cannot tell the middleware when the
 *   work downstream has settled, so the permit is held until the response ends; if the client
 *   leaves first, until the handler ends the response or the route's own deadline passes
 *   (`hold-until-response-ends.ts`). Pass `req.spillway.signal` down so the work stops with it,
 *   and end the response when it has.
 *
 * `guard.errorHandler()` answers a dependency's overload with the right signal instead of 500,
 * through the same step as node:http's guard (`answer-failure.ts`).
 * A failure inside admission itself (a `key` function that throws) is answered 500 by the guard.
 *
 * @module
 */
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import {
  admission,
  writeRefusal,
  type Admitted,
  type Admission,
  type AdmissionOptions,
  type AdmitResult,
  type RequestContext,
  type RouteSettings,
} from '../node/index.js';
import { ambientOption, runAdmitted } from '../node/ambient.js';
import { answerFailure, type Answerer } from '../node/answer-failure.js';
import { holdUntilResponseEnds } from './hold-until-response-ends.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by Spillway on admitted requests. */
    spillway?: RequestContext;
  }
}

/** A handler run under a route guard: like an Express handler, plus the admission context. */
export type GuardedHandler = (req: Request, res: Response, context: RequestContext) => unknown;

/** The Express guard: use it as middleware, or wrap route handlers with `route`. */
export interface ExpressGuard extends RequestHandler {
  /** Wraps a handler; `settings` give the route its own limit, line, quota, deadline. */
  route(
    handler: GuardedHandler,
    settings?: RouteSettings & { readonly name?: string },
  ): RequestHandler;
  /** Error middleware that turns overload errors into the matching refusal. */
  errorHandler(): ErrorRequestHandler;
  /** The underlying node guard. */
  readonly admission: Admission;
}

/**
 * Creates the Express guard.
 *
 * @example
 * const guard = spillway({ limit: 10, maxQueue: 10, maxQueueWaitMs: 50 });
 * app.get('/orders', guard.route(async (req, res, { signal }) => res.json(await db.orders({ signal }))));
 * app.use(guard.errorHandler());
 */
export function spillway(options: AdmissionOptions = {}): ExpressGuard {
  const guard = admission(options);
  const answerer = expressAnswerer(guard);
  // The routes after the guard (or the wrapped handler) run in the request's ambient context.
  const ambient = ambientOption(options.ambientContext);
  let routes = 0;

  /** Admits, then either writes the refusal or hands the context on. */
  const admit = (
    exchange: { req: Request; res: Response; next: NextFunction; route?: string },
    proceed: (context: Admitted | undefined) => void,
  ): void => {
    const { req, res, next } = exchange;
    const decide = (result: AdmitResult): void => {
      if (result.admitted) proceed(result.context);
      else if (result.response !== undefined) {
        try {
          writeRefusal(res, result.response, result.closeConnection);
        } catch (error) {
          guard.fail(error, req, res);
        }
      }
    };
    const result = guard.admit(req, res, exchange.route);
    if ('then' in result) result.then(decide, next);
    else decide(result);
  };

  const middleware = ((req: Request, res: Response, next: NextFunction) => {
    admit({ req, res, next }, (context) => {
      if (context === undefined) {
        next();
        return;
      }
      req.spillway = context;
      holdUntilResponseEnds(context, res);
      runAdmitted(ambient, context, next);
    });
  }) as ExpressGuard;

  // Through locals, not assigned as literals: see noPretenuredClosure in eslint.config.js.
  const route: ExpressGuard['route'] = (handler, settings = {}) => {
    const added = guard.addRoute({
      ...settings,
      name: settings.name ?? `express-route-${++routes}`,
      match: () => false,
    });
    return (req, res, next) => {
      admit({ req, res, next, route: added }, (context) => {
        if (context === undefined) {
          next();
          return;
        }
        req.spillway = context;
        Promise.resolve()
          .then(() => runAdmitted(ambient, context, () => handler(req, res, context)))
          .then(
            () => context.settle(),
            (error: unknown) => {
              if (!answerFailure({ error, context }, res, answerer)) next(error);
            },
          );
      });
    };
  };
  middleware.route = route;

  // Express recognises error middleware by its four parameters, so the limit of three cannot hold.
  /* eslint-disable max-params */
  const errorMiddleware = (
    error: unknown,
    _req: Request,
    res: Response,
    next: NextFunction,
  ): void => {
    // The permit is settled by whoever holds it (`route`, or the middleware's response).
    if (!answerFailure({ error }, res, answerer)) next(error);
  };
  /* eslint-enable max-params */
  const errorHandler = (): typeof errorMiddleware => errorMiddleware;
  middleware.errorHandler = errorHandler;

  Object.defineProperty(middleware, 'admission', { value: guard, enumerable: true });
  return middleware;
}

/**
 * How the Express guard answers a failed handler: refusals on the response, and failures that
 * are not overload (or come after the answer began) left to Express's error handling.
 */
function expressAnswerer(guard: Admission): Answerer<Response> {
  return {
    headerNames: guard.headerNames,
    contextOf: (res) => res.req.spillway,
    canAnswer: (res) => !res.headersSent,
    write: (res, response) => writeRefusal(res, response, false),
  };
}
