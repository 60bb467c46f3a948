/**
 * `spillway/fastify`: a Fastify 5 plugin over the node admission guard. The decision runs in
 * `onRequest` (before the body is parsed); each route's handler is wrapped at registration
 * (`onRoute`) so its permit is held until the handler's promise settles; per-route settings
 * come from `config.spillway` (`false` exempts a route); `fastify.spillway` is the guard and
 * `request.spillway` the admitted request's context. Fastify is a type-only import and an
 * optional peer dependency. Register the plugin before the routes it should guard. A failure
 * inside admission itself (a `key` function that throws) is answered 500 by the guard, on the
 * raw response, exactly as node:http and Express answer it.
 *
 * @module
 */
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  RouteOptions as FastifyRouteOptions,
} from 'fastify';
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

declare module 'fastify' {
  interface FastifyInstance {
    /** The Spillway guard (stats, routes). */
    spillway: Admission;
  }
  interface FastifyRequest {
    /** Set by Spillway on admitted requests. */
    spillway: RequestContext | null;
  }
  interface FastifyContextConfig {
    /** Per-route Spillway settings; `false` exempts the route. */
    spillway?: (RouteSettings & { readonly name?: string }) | false;
  }
}

const routeKey = Symbol('spillway.route');

interface MarkedConfig {
  [routeKey]?: string | false;
}

function sendRefusal(
  reply: FastifyReply,
  response: RefusalResponse,
  closeConnection: boolean,
): void {
  const h = response.headers;
  for (let i = 0; i < h.length; i += 2) void reply.header(h[i]!, h[i + 1]!);
  if (closeConnection) void reply.header('connection', 'close');
  // The body as a string through a serializer of its own: Fastify then sends it as is (with no
  // charset parameter added to the content type), and node:http sends head and body in one
  // write, where a Buffer is first copied and then leaves with the head in a two-part writev.
  void reply.code(response.status).serializer(asIs).send(response.body);
}

/** Sends a string unchanged; anything else (an error handler's object, say) as JSON. */
function asIs(payload: unknown): string {
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

/**
 * How the plugin answers a failed handler: refusals through the reply (so `onSend` and
 * `onResponse` hooks see them), and failures that are not overload (or come after the reply
 * was sent) left to Fastify's error handling.
 */
function fastifyAnswerer(guard: Admission): Answerer<FastifyReply> {
  return {
    headerNames: guard.headerNames,
    contextOf: (reply) => reply.request.spillway ?? undefined,
    canAnswer: (reply) => !reply.sent,
    write: (reply, response) => sendRefusal(reply, response, false),
  };
}

const plugin: FastifyPluginCallback<AdmissionOptions> = (
  fastify: FastifyInstance,
  options,
  done,
) => {
  let guard: Admission;
  try {
    guard = admission(options);
  } catch (error) {
    done(error as Error);
    return;
  }
  const answerer = fastifyAnswerer(guard);
  // Route handlers run in the request's ambient context.
  const ambient = ambientOption(options.ambientContext);
  const started = new WeakSet<FastifyRequest>();
  // Whether any route has settings of its own (or is exempt). Until one has, every request
  // takes the default route, and `request.routeOptions` — a getter that builds a new object of
  // a dozen fields per call, a visible share of a refusal's cost (S8) — need not be read.
  let anyMarked = false;
  fastify.decorate('spillway', guard);
  fastify.decorateRequest('spillway', null);

  fastify.addHook('onRoute', (route: FastifyRouteOptions) => {
    const settings = route.config?.spillway;
    const config = (route.config ?? {}) as MarkedConfig &
      NonNullable<FastifyRouteOptions['config']>;
    route.config = config;
    const methods = Array.isArray(route.method) ? route.method.join(',') : route.method;
    if (settings !== undefined) anyMarked = true;
    if (settings === false) {
      config[routeKey] = false;
    } else if (settings !== undefined) {
      config[routeKey] = guard.addRoute({
        ...settings,
        name: settings.name ?? `${methods} ${route.url}`,
        match: () => false,
      });
    }
    if (settings === false) return;
    const original = route.handler;
    const guarded = async function guarded(
      this: FastifyInstance,
      request: FastifyRequest,
      reply: FastifyReply,
    ) {
      const context = (request.spillway as Admitted | null) ?? undefined;
      started.add(request);
      let value: unknown;
      try {
        value = await (context === undefined
          ? original.call(this, request, reply)
          : runAdmitted(ambient, context, () => original.call(this, request, reply)));
      } catch (error) {
        if (answerFailure({ error, context }, reply, answerer)) return reply;
        throw error;
      }
      context?.settle();
      return value;
    };
    route.handler = guarded;
  });

  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, next) => {
    const marked = anyMarked
      ? (request.routeOptions.config as MarkedConfig | undefined)?.[routeKey]
      : undefined;
    if (marked === false) {
      next();
      return;
    }
    const decide = (result: AdmitResult): void => {
      if (result.admitted) {
        request.spillway = result.context ?? null;
        next();
      } else if (result.response !== undefined) {
        sendRefusal(reply, result.response, result.closeConnection);
      } else {
        // The client went away while waiting, or the guard answered a failure: nothing to send.
        reply.hijack();
      }
    };
    const result = guard.admit(request.raw, reply.raw, marked);
    if ('then' in result) {
      result.then(decide, (error: unknown) =>
        next(error instanceof Error ? error : new Error(String(error))),
      );
    } else decide(result);
  });

  // An admitted request answered before its handler ran (a validation error, a hook's reply)
  // or abandoned by its client is finished here, with no sample for an adaptive limit (its
  // handler's work never ran); one whose handler ran is finished only when the handler
  // settles, even if it replied early and kept working.
  const finishUnstarted = (request: FastifyRequest): void => {
    if (!started.has(request)) (request.spillway as Admitted | null)?.finish('ignored');
  };
  fastify.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, next) => {
    finishUnstarted(request);
    next();
  });
  fastify.addHook('onClose', (_instance, next) => {
    guard.close();
    next();
  });
  fastify.addHook('onRequestAbort', (request: FastifyRequest, next) => {
    finishUnstarted(request);
    next();
  });

  done();
};

// Plugin metadata stamped by hand (what fastify-plugin would add): skip encapsulation so the
// hooks apply to every route, and declare the Fastify major this was built for.
Object.assign(plugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'spillway',
  [Symbol.for('plugin-meta')]: { fastify: '5.x', name: 'spillway' },
});

/** The plugin: `fastify.register(fastifySpillway, options)`. */
export const fastifySpillway = plugin;
export default fastifySpillway;
