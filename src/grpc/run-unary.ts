/**
 * Runs an admitted unary call's handler and answers the call: the response when it resolves;
 * when it rejects, the overload it stands for as a refusal status (a Spillway error from a
 * dependency, or a dependency's gRPC status error, with its signal passed up — `never` when a
 * layer below already retried), or else the error itself, for grpc-js to answer as it would
 * without the guard. The slot is let go when the handler has settled, before the answer goes.
 *
 * @module
 */
import {
  Metadata,
  status,
  type ServerErrorResponse,
  type StatusObject,
  type ServerUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { DeadlineExceededError } from '../index.js';
import {
  refusalFromError,
  refusalResponse,
  type HeaderNames,
  type Refusal,
} from '../http/index.js';
import type { RequestContext } from '../node/index.js';
import { publishRefusal, refusalChannel } from '../node/refusal-channel.js';
import type { Admissions, Admitted } from './admissions.js';
import { statusOfRefusal } from './status-of-refusal.js';
import { refusalOfStatusError } from './status-signal.js';

/** A unary call to run: the handler, the call and its callback, and the guard's field names. */
export interface UnaryRun<Req, Res> {
  readonly handler: (
    call: ServerUnaryCall<Req, Res>,
    context: RequestContext,
  ) => Res | PromiseLike<Res>;
  readonly call: ServerUnaryCall<Req, Res>;
  readonly callback: sendUnaryData<Res>;
  readonly names: HeaderNames;
}

/**
 * What the admitted request's limit is told of a failure that was a gRPC status error: the
 * Spillway failure it stands for (`Admitted.settle` reads those), so an adaptive limit learns a
 * dependency's overload from a gRPC dependency as it does from an HTTP one.
 */
const overloadSeen = Object.freeze({ status: 503 });
const deadlineSeen = new DeadlineExceededError();

/** The failure to settle with for a dependency's overload, or (`deadline`) a spent deadline. */
export function seenAs(deadline: boolean): object {
  return deadline ? deadlineSeen : overloadSeen;
}

/**
 * Runs `run` under `admitted`, in its ambient context (so `spillway/client` calls made in the
 * handler carry its deadline and criticality); never throws, never rejects.
 */
export function runUnary<Req, Res>(
  run: UnaryRun<Req, Res>,
  admitted: Admitted,
  admissions: Admissions,
): void {
  let started: Res | PromiseLike<Res>;
  try {
    started = admissions.run(admitted, () => run.handler(run.call, admitted.context));
  } catch (error) {
    failed(run, admitted, error);
    return;
  }
  Promise.resolve(started).then(
    (value) => {
      admitted.admitted?.settle();
      const fields = admitted.exchange.fields;
      answer(admitted, () => run.callback(null, value, fields && metadataOf(fields)));
    },
    (error: unknown) => failed(run, admitted, error),
  );
}

function failed<Req, Res>(run: UnaryRun<Req, Res>, admitted: Admitted, error: unknown): void {
  const own = refusalFromError(error);
  const refusal: Refusal | undefined = own ?? refusalOfStatusError(error, run.names);
  const context = admitted.admitted;
  if (refusal === undefined) {
    context?.settle({ error });
    answer(admitted, () => run.callback(asGrpcError(error)));
    return;
  }
  context?.settle({ error: own !== undefined ? error : seenAs(refusal.reason === 'deadline') });
  if (refusalChannel.hasSubscribers) {
    publishRefusal(refusal, refusalResponse(refusal, run.names), context);
  }
  const answered = statusOfRefusal(refusal, run.names);
  // The RateLimit fields admission set for this call go with its answer, whatever it is.
  const fields = admitted.exchange.fields;
  if (fields !== undefined) {
    for (const name of Object.keys(fields)) {
      if (answered.metadata.get(name).length === 0) answered.metadata.set(name, fields[name]!);
    }
  }
  answer(admitted, () => run.callback(answered));
}

/** Trailers carrying `fields` (the RateLimit fields the guard set for an admitted call). */
function metadataOf(fields: Readonly<Record<string, string>>): Metadata {
  const metadata = new Metadata();
  for (const name of Object.keys(fields)) metadata.set(name, fields[name]!);
  return metadata;
}

/** What grpc-js can answer: an object as it is; anything else thrown is an unknown failure. */
function asGrpcError(error: unknown): ServerErrorResponse | Partial<StatusObject> {
  if (typeof error === 'object' && error !== null) return error;
  return { code: status.UNKNOWN, details: 'Unknown error' };
}

/** Answers, unless the call has ended already (grpc-js would drop the answer anyway). */
function answer(admitted: Admitted, send: () => void): void {
  const exchange = admitted.exchange;
  if (exchange.ended) return;
  exchange.answered();
  try {
    send();
  } catch {
    // A response grpc-js cannot serialise is its to report; the slot is already free.
  }
}
