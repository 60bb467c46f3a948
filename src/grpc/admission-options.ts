/**
 * The gRPC guard's options: the HTTP guard's (limits, lines, quotas, deadlines, criticality,
 * routes, monitors), with the client key and failure report taken from the call rather than a
 * node:http request, and the gRPC health service exempt by default. Routes match method paths
 * (`/package.Service/Method`, `/package.Service/*`).
 *
 * @module
 */
import { SpillwayConfigError, systemClock } from '../index.js';
import type { AdmissionOptions } from '../node/index.js';
import { callInfoOf, type GrpcCallInfo } from './stand-in.js';

/** Options of `grpcAdmission`. */
export interface GrpcAdmissionOptions extends Omit<AdmissionOptions, 'key' | 'onError' | 'exempt'> {
  /**
   * The client key for quotas and penalties. Default: the peer's address (or a forwarded one
   * from `x-forwarded-for` metadata, under `trustProxy`). Return undefined to fall back to the
   * default. If it throws, the call is answered `INTERNAL` and `onError` is told.
   */
  readonly key?: (call: GrpcCallInfo) => string | undefined;
  /**
   * Failures inside admission itself (a `key` function or route `match` that threw), answered
   * `INTERNAL`. A handler's own failures are grpc-js's to answer, as without the guard.
   * @default logs to stderr
   */
  readonly onError?: (error: unknown, call: GrpcCallInfo) => void;
  /**
   * Method paths never counted or limited.
   * @default ['/grpc.health.v1.Health/Check', '/grpc.health.v1.Health/Watch']
   */
  readonly exempt?: readonly string[];
}

/** The gRPC health service's methods: health checks never compete for user slots. */
export const healthMethods: readonly string[] = Object.freeze([
  '/grpc.health.v1.Health/Check',
  '/grpc.health.v1.Health/Watch',
]);

/** The node guard's options for `o`; throws a `SpillwayConfigError` naming a bad option. */
export function nodeOptionsOf(o: GrpcAdmissionOptions): AdmissionOptions {
  if (typeof o !== 'object' || o === null) {
    throw new SpillwayConfigError('grpcAdmission options', 'an options object', o);
  }
  const { key, onError, exempt, ...rest } = o;
  if (key !== undefined && typeof key !== 'function') {
    throw new SpillwayConfigError('key', 'a function of the call', key);
  }
  if (onError !== undefined && typeof onError !== 'function') {
    throw new SpillwayConfigError('onError', 'a function of the error and the call', onError);
  }
  const options: AdmissionOptions = {
    ...rest,
    clock: o.clock ?? systemClock,
    exempt: exempt ?? healthMethods,
  };
  // Without `onError`, the guard's own report: `spillway: POST /package.Service/Method failed: …`.
  return {
    ...options,
    ...(key === undefined ? {} : { key: (req) => key(callInfoOf(req)) }),
    ...(onError === undefined ? {} : { onError: (error, req) => onError(error, callInfoOf(req)) }),
  };
}
