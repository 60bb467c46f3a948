/**
 * `spillway/grpc`: both sides of the backpressure contract for `@grpc/grpc-js` (≥ 1.10, an
 * optional peer dependency).
 *
 * - Server: `grpcAdmission(options)` is the HTTP guard's admission (the same options and the
 *   same decisions, made by the guard itself) answered in gRPC's terms — quota →
 *   `RESOURCE_EXHAUSTED`; capacity, shedding, overload → `UNAVAILABLE`; a spent deadline →
 *   `DEADLINE_EXCEEDED` — with `grpc-retry-pushback-ms` (`-1` for `never`) and `spillway-retry`
 *   trailers. `guard.unary(handler)` wraps a unary handler (a signal, the slot held until it
 *   settles, a dependency's overload passed up); `guard.interceptor` admits every call,
 *   streaming ones too.
 * - Client: `dependencyInterceptor(dependency)` runs each unary call through a `dependency()`
 *   from `spillway/client`: cap, shared retry budget, backoff honouring pushback (negative
 *   stops), one deadline across attempts, criticality and attempt in metadata, breaker and
 *   adaptive throttle. `callOptions({ deadline, criticality })` sets them per call.
 *
 * @module
 */
export { grpcAdmission, type GrpcAdmission, type GrpcUnaryHandler } from './admission.js';
export { healthMethods, type GrpcAdmissionOptions } from './admission-options.js';
export type { GrpcCallInfo } from './stand-in.js';
export {
  dependencyInterceptor,
  type DependencyInterceptorOptions,
} from './dependency-interceptor.js';
export { callOptions, type GrpcCallOptions } from './call-options.js';
export { statusOfRefusal } from './status-of-refusal.js';
export { GrpcStatusError, trailerSignal, type TrailerSignal } from './status-signal.js';
