/**
 * The guarded handler under the tracing channel `spillway.request`, taken only while someone
 * subscribes to it: `start` (with the channel's bound stores entered, so a tracer's context
 * holds inside the handler) → the handler's synchronous part → `end`; then, once its work has
 * settled, `asyncStart` → the guard finishes the request (answering a failure, releasing the
 * slot) → `asyncEnd`. `error` comes before `end` when the handler throws, before `asyncStart`
 * when its promise rejects. The same steps as the untraced path, in the same order.
 *
 * @module
 */
import { requestChannel, type RequestTraceMessage } from '../channels/channels.js';
import { answerFailure, type Answerer, type NodeExchange } from './answer-failure.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Admitted } from './request-context.js';

/** The guard's handler type (`AdmittedHandler`), restated to keep the guard's file a leaf. */
type Handler = (req: IncomingMessage, res: ServerResponse, context: Admitted) => unknown;

/** Whether anyone traces guarded handlers now. */
export function traced(): boolean {
  return requestChannel.hasSubscribers;
}

/** Runs `handler` for the admitted request `context` under `spillway.request`, then finishes it. */
export function runTraced(
  handler: Handler,
  context: Admitted,
  answerer: Answerer<NodeExchange>,
): Promise<void> {
  const { req, res } = context;
  const message: RequestTraceMessage = {
    req,
    res,
    route: context.route,
    criticality: context.criticality,
  };
  const tc = requestChannel;
  return tc.start.runStores(message, () => {
    let out: unknown;
    try {
      out = handler(req, res, context);
    } catch (error) {
      message.error = error;
      tc.error.publish(message);
      tc.end.publish(message);
      answerFailure({ error, context }, context, answerer);
      return Promise.resolve();
    }
    tc.end.publish(message);
    return Promise.resolve(out).then(
      (result) => {
        message.result = result;
        tc.asyncStart.publish(message);
        context.settle();
        tc.asyncEnd.publish(message);
      },
      (error: unknown) => {
        message.error = error;
        tc.error.publish(message);
        tc.asyncStart.publish(message);
        answerFailure({ error, context }, context, answerer);
        tc.asyncEnd.publish(message);
      },
    );
  });
}
