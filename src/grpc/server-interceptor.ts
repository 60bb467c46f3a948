/**
 * The guard as a grpc-js server interceptor: every call is decided on when its metadata
 * arrives, before the handler sees anything (a call in line waits there, its messages held by
 * grpc-js). A refused call is answered there and its handler never runs. An admitted one goes
 * on, and its slot is held until its status is sent or it is cancelled — unless `guard.unary`
 * wraps its handler, which then takes the call over and holds the slot until the handler
 * settles. On cancellation (the client gone, or the deadline passed) the context's signal
 * aborts; a streaming handler reaches it through `guard.contextOf(call)`. grpc-js starts a
 * handler when the metadata is passed on (streaming requests) or at the half-close (a single
 * request): both are passed on inside the call's ambient context, so the handler runs in it.
 *
 * @module
 */
import { ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';
import type { AdmitResult } from '../node/index.js';
import type { Admissions, Admitted } from './admissions.js';
import { seenAs } from './run-unary.js';
import { addressOfPeer, CallExchange } from './stand-in.js';

/** A status as a handler sends it (grpc-js's `PartialStatusObject`). */
type PartialStatusObject = Parameters<ServerInterceptingCall['sendStatus']>[0];

/** The interceptor deciding through `admissions`. */
export function admissionInterceptor(admissions: Admissions): ServerInterceptor {
  const settings = { names: admissions.names, clock: admissions.clock };
  return (method, call) => {
    let exchange: CallExchange | undefined;
    let admitted: Admitted | undefined;
    /** Ends the call's hold on its slot, unless the unary wrapper took it over. */
    const finish = (s: PartialStatusObject | undefined): void => {
      if (admitted === undefined || admitted.handedOver) return;
      const context = admitted.admitted;
      admitted = undefined;
      if (s === undefined || s.code === status.OK) context?.settle();
      else context?.settle({ error: failureOf(s) });
    };
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const info = call.getConnectionInfo?.();
            const address = info?.remoteAddress ?? addressOfPeer(call.getPeer());
            const x = new CallExchange(
              { path: method.path, metadata, address },
              call.getDeadline(),
              settings,
            );
            exchange = x;
            const decided = (result: AdmitResult): void => {
              const let_ = admissions.letThrough(result, x);
              if (let_ !== undefined) {
                admitted = let_;
                // The call ended while it waited for the slot: nothing to run.
                if (x.ended) finish(undefined);
                else {
                  admissions.handOver(metadata, let_);
                  // The handler starts in here (or at the half-close): in the call's context.
                  admissions.run(let_, () => pass(metadata));
                }
                return;
              }
              const refusal = admissions.refusalStatus(result, x);
              if (refusal !== undefined) {
                x.answered();
                call.sendStatus(refusal);
              }
            };
            const result = admissions.guard.admit(x.req, x.res);
            if ('then' in result) void result.then(decided);
            else decided(result);
          },
          onReceiveHalfClose: (next) => {
            if (admitted === undefined) next();
            else admissions.run(admitted, next);
          },
          onCancel: () => {
            exchange?.cancel();
            finish(undefined);
          },
        }),
      sendStatus: (s, next) => {
        exchange?.answered();
        finish(s);
        next(s);
      },
    });
  };
}

/** What the limit is told of a call that ended with a status other than OK. */
function failureOf(s: PartialStatusObject): unknown {
  if (s.code === status.UNAVAILABLE || s.code === status.RESOURCE_EXHAUSTED) return seenAs(false);
  if (s.code === status.DEADLINE_EXCEEDED) return seenAs(true);
  return s;
}
