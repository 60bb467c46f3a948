/**
 * The one answer to a failed request, for node:http, Express and Fastify alike:
 * error → its refusal (`refusalFromError`), or, where the guard answers ordinary failures itself,
 * the refusal table's 500 with `onError` told → built from the table, published on the refusal
 * channel and written → the permit's outcome reported (`Admitted.settle`). An adapter says only
 * how it writes, in an {@link Answerer} made once per guard.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  refusalFromError,
  refusalResponse,
  type HeaderNames,
  type Refusal,
  type RefusalResponse,
} from '../http/index.js';
import { logFailure, type GuardSettings } from './admission-options.js';
import { publishRefusal, refusalChannel } from './refusal-channel.js';
import { Admitted, type RequestContext } from './request-context.js';
import { writeRefusal } from './write-refusal.js';

/** How one adapter answers a request it knows as `X`. */
export interface Answerer<X> {
  readonly headerNames: HeaderNames;
  /** The request's context, if it was admitted: its route and key go on the refusal channel. */
  contextOf(exchange: X): RequestContext | undefined;
  /** Whether nothing of an answer has gone out yet, so one can still be written. */
  canAnswer(exchange: X): boolean;
  /** Puts a response built from the refusal table on the wire. */
  write(exchange: X, response: RefusalResponse): void;
  /**
   * Set where the guard answers ordinary failures itself (node:http): tells `onError` about a
   * failure that is not overload, which is then answered with the 500. Never throws. Without
   * it, such failures are left to the caller (a framework's error handling).
   */
  readonly tell?: (error: unknown, exchange: X) => void;
  /**
   * Set with `tell`: ends a response that can no longer be answered whole, so the client does
   * not take a partial answer for a whole one. Without it, that is left to the caller too.
   */
  readonly cut?: (exchange: X) => void;
}

/** A failed handler: what it threw, and the admitted request whose permit it held, if any. */
export interface HandlerFailure {
  readonly error: unknown;
  /** Omit where something else settles the permit (Express middleware's `errorHandler`). */
  readonly context?: Admitted | undefined;
}

/**
 * Answers `failure` on `exchange` and settles its permit. Returns false when the answer is left
 * to the caller (an ordinary failure, or one after the answer began, in an adapter without
 * `tell`): Express passes it to `next`, Fastify rethrows it. Never throws.
 */
export function answerFailure<X>(
  failure: HandlerFailure,
  exchange: X,
  answerer: Answerer<X>,
): boolean {
  try {
    let refusal = refusalFromError(failure.error);
    if (refusal === undefined) {
      if (answerer.tell === undefined) return false;
      answerer.tell(failure.error, exchange);
      refusal = failed;
    }
    return answerWith(refusal, exchange, answerer);
  } finally {
    failure.context?.settle(failure);
  }
}

const failed: Refusal = Object.freeze({ reason: 'failure' });

function answerWith<X>(refusal: Refusal, exchange: X, answerer: Answerer<X>): boolean {
  if (!answerer.canAnswer(exchange)) return cut(exchange, answerer);
  const response = refusalResponse(refusal, answerer.headerNames);
  if (refusalChannel.hasSubscribers) {
    publishRefusal(refusal, response, answerer.contextOf(exchange));
  }
  try {
    answerer.write(exchange, response);
    return true;
  } catch (thrown) {
    // An answer that cannot be written is a failure like any other: answered with the 500,
    // once; if even that cannot be written, the connection is cut.
    if (refusal === failed || answerer.tell === undefined) return cut(exchange, answerer);
    answerer.tell(thrown, exchange);
    return answerWith(failed, exchange, answerer);
  }
}

function cut<X>(exchange: X, answerer: Answerer<X>): boolean {
  if (answerer.cut === undefined) return false;
  answerer.cut(exchange);
  return true;
}

/** A node:http request: its admitted context (which holds both), or the bare pair. */
export interface NodeExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

/**
 * The answerer of node:http's guard, which every adapter's guard uses for failures inside
 * admission: the response is the raw one, ordinary failures are answered 500 with `onError`
 * told (a throwing `onError` is logged, never thrown), and an answer begun is cut short.
 */
export function nodeAnswerer(settings: GuardSettings): Answerer<NodeExchange> {
  const { headerNames, onError } = settings;
  return {
    headerNames,
    contextOf: (x) => (x instanceof Admitted ? x : undefined),
    canAnswer: ({ res }) => !res.headersSent && !res.destroyed,
    write: ({ res }, response) => writeRefusal(res, response, false),
    tell: (error, { req }) => {
      try {
        onError(error, req);
      } catch (thrown) {
        logFailure(thrown, req);
      }
    },
    cut: ({ res }) => {
      try {
        if (!res.writableEnded) res.destroy();
      } catch {
        // Nothing more can be done for a response that cannot even be destroyed.
      }
    },
  };
}
