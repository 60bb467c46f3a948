/**
 * The server side of the contract for `@grpc/grpc-js`: the HTTP guard's admission, decided by
 * the guard itself over a stand-in of the call (`stand-in.ts`), answered in gRPC's terms —
 * quota → `RESOURCE_EXHAUSTED`; capacity, shedding, overload → `UNAVAILABLE`; a spent deadline
 * → `DEADLINE_EXCEEDED`; each with `grpc-retry-pushback-ms` (`-1` for `never`) and
 * `spillway-retry` trailers.
 *
 * Two doors, one guard:
 * - `guard.unary(handler)` wraps a unary handler: admission, an `AbortSignal` that fires on the
 *   call's deadline and on cancellation, the slot held until the handler's promise settles
 *   (cancelled or not), and a dependency's overload answered with its signal passed up. It is
 *   the one way to get all four: a grpc-js server interceptor cannot hand the handler a signal,
 *   never sees the error a handler threw (only the `UNKNOWN` status grpc-js made of it), and
 *   learns nothing more when a cancelled handler stops working.
 * - `guard.interceptor`, a grpc-js `ServerInterceptor`, admits every call it sees — streaming
 *   ones too — before the handler starts, and holds the slot until the call's status is sent or
 *   it is cancelled. A call it admitted whose handler `guard.unary` wraps is handed over to the
 *   wrapper (found by its request metadata), never admitted twice.
 *
 * Either way the handler runs in the call's ambient context (unless `ambientContext: false`),
 * so `spillway/client` calls it makes — `dependencyInterceptor`'s too — carry the call's
 * deadline and criticality to the next hop by themselves.
 *
 * @module
 */
import type { Metadata, ServerInterceptor, ServerUnaryCall, handleUnaryCall } from '@grpc/grpc-js';
import { SpillwayConfigError } from '../index.js';
import { admission, type Admission, type AdmitResult, type RequestContext } from '../node/index.js';
import { ambientOption } from '../node/ambient.js';
import { nodeOptionsOf, type GrpcAdmissionOptions } from './admission-options.js';
import { admissionInterceptor } from './server-interceptor.js';
import { runUnary } from './run-unary.js';
import { Admissions } from './admissions.js';
import { addressOfPeer, CallExchange } from './stand-in.js';

/** A unary handler under admission: resolve with the response, or reject. */
export type GrpcUnaryHandler<Req, Res> = (
  call: ServerUnaryCall<Req, Res>,
  context: RequestContext,
) => Res | PromiseLike<Res>;

/** The gRPC guard. */
export interface GrpcAdmission {
  /** Wraps a unary handler (see the module's description). */
  unary<Req, Res>(handler: GrpcUnaryHandler<Req, Res>): handleUnaryCall<Req, Res>;
  /** Admission for every call, streaming ones too: `new Server({ interceptors: [guard.interceptor] })`. */
  readonly interceptor: ServerInterceptor;
  /**
   * The context of a call `interceptor` admitted (a streaming handler's signal, say), or
   * undefined when it did not admit it (or it was exempt).
   */
  contextOf(call: { readonly metadata: Metadata }): RequestContext | undefined;
  /** The node guard deciding (stats, routes). */
  readonly admission: Admission;
  /** Stops the guard's background work (see `Admission.close`). Idempotent. */
  close(): void;
}

/**
 * Creates the gRPC guard.
 *
 * @example
 * const guard = grpcAdmission({ limit: 10, maxQueue: 10, maxQueueWaitMs: 50 });
 * server.addService(UsersService, {
 *   getUser: guard.unary(async (call, { signal }) => users.byId(call.request.id, { signal })),
 * });
 */
export function grpcAdmission(options: GrpcAdmissionOptions = {}): GrpcAdmission {
  const nodeOptions = nodeOptionsOf(options);
  const guard = admission(nodeOptions);
  const settings = { names: guard.headerNames, clock: nodeOptions.clock! };
  const admissions = new Admissions(guard, {
    ...settings,
    ambient: ambientOption(options.ambientContext),
  });
  const names = settings.names;

  const unary = <Req, Res>(handler: GrpcUnaryHandler<Req, Res>): handleUnaryCall<Req, Res> => {
    if (typeof handler !== 'function') {
      throw new SpillwayConfigError('handler', 'a function', handler);
    }
    return (call, callback) => {
      const handed = admissions.adopt(call.metadata);
      if (handed !== undefined) {
        runUnary({ handler, call, callback, names }, handed, admissions);
        return;
      }
      const exchange = new CallExchange(
        { path: pathOf(call), metadata: call.metadata, address: addressOfPeer(call.getPeer()) },
        call.getDeadline(),
        settings,
      );
      // grpc-js says `cancelled` on cancellation, at the deadline, and after the answer.
      call.once('cancelled', () => exchange.cancel());
      const decided = (result: AdmitResult): void => {
        const admitted = admissions.letThrough(result, exchange);
        if (admitted !== undefined) {
          runUnary({ handler, call, callback, names }, admitted, admissions);
          return;
        }
        const refusal = admissions.refusalStatus(result, exchange);
        // None: the client left while it waited, and there is nobody to answer.
        if (refusal !== undefined) callback(refusal);
      };
      const result = guard.admit(exchange.req, exchange.res);
      if ('then' in result) void result.then(decided);
      else decided(result);
    };
  };

  return {
    unary,
    interceptor: admissionInterceptor(admissions),
    contextOf: (call) => admissions.contextOf(call.metadata),
    admission: guard,
    close: () => guard.close(),
  };
}

/** The method's path (grpc-js ≥ 1.10 has `getPath`). */
function pathOf(call: ServerUnaryCall<unknown, unknown>): string {
  return typeof call.getPath === 'function' ? call.getPath() : '/';
}
