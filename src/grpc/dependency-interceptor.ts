/**
 * The caller's side of the contract for `@grpc/grpc-js`: a client interceptor that runs each
 * unary call through a `dependency()` from `spillway/client` — the same object, and so the
 * same cap, retry budget, backoff, breaker and adaptive throttle, that its HTTP calls use, with
 * one deadline across attempts and the context in metadata (see `guarded-call.ts`).
 * Streaming calls go through untouched: a stream cannot be replayed, and its messages would
 * need buffering to be; wrap one in `dependency.call` yourself for the cap and the breaker.
 *
 * @module
 */
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { SpillwayConfigError, systemClock, type Clock } from '../index.js';
import { headerNamesOf, type HeaderNames } from '../http/index.js';
import type { Dependency } from '../client/index.js';
import { clockLike } from '../core/internal/validate.js';
import { spillwayOptionsOf } from './call-options.js';
import { GuardedCall, type GuardedCallSettings } from './guarded-call.js';

/** Options of {@link dependencyInterceptor}. */
export interface DependencyInterceptorOptions {
  /**
   * Whether calls may safely run twice, so that a refused one is retried: a boolean for every
   * method, or a function of the method's path (`/package.Service/Method`). gRPC has no
   * idempotency marker; a call can say for itself with `callOptions({ idempotent })`.
   * @default false
   */
  readonly idempotent?: boolean | ((path: string) => boolean);
  /** Field names, the same as the dependency's. @default defaultHeaderNames */
  readonly headerNames?: Partial<HeaderNames>;
  /** The dependency's clock, for its deadlines. @default systemClock */
  readonly clock?: Clock;
}

/**
 * A grpc-js client interceptor that runs each unary call through `dependency`.
 *
 * @example
 * const users = dependency({ name: 'users', limit: 32 });
 * const client = new UsersClient(address, credentials.createInsecure(), {
 *   interceptors: [dependencyInterceptor(users, { idempotent: true })],
 * });
 */
export function dependencyInterceptor(
  dependency: Dependency,
  options: DependencyInterceptorOptions = {},
): Interceptor {
  if (
    typeof dependency !== 'object' ||
    dependency === null ||
    typeof dependency.call !== 'function'
  ) {
    throw new SpillwayConfigError('dependency', 'a dependency() from spillway/client', dependency);
  }
  if (typeof options !== 'object' || options === null) {
    throw new SpillwayConfigError('dependencyInterceptor options', 'an options object', options);
  }
  const idempotent = options.idempotent ?? false;
  if (typeof idempotent !== 'boolean' && typeof idempotent !== 'function') {
    throw new SpillwayConfigError('idempotent', 'a boolean or a function of the path', idempotent);
  }
  const settings: GuardedCallSettings = {
    dependency,
    names: headerNamesOf(options.headerNames),
    clock: options.clock === undefined ? systemClock : clockLike('clock', options.clock),
    idempotent:
      typeof idempotent === 'boolean' ? () => idempotent : (path) => idempotent(path) === true,
  };
  return (callOptions, next) => {
    const method = callOptions.method_definition;
    if (method.requestStream || method.responseStream)
      return new InterceptingCall(next(callOptions));
    const call = new GuardedCall({
      settings,
      options: callOptions,
      own: spillwayOptionsOf(callOptions),
      next,
    });
    return new InterceptingCall(call);
  };
}
