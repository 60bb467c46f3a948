/**
 * `dependency()`: everything a caller owes one callee, in one object. Each call goes through,
 * cheapest first: the caller's deadline → the circuit breaker → a cap on calls in flight (with a
 * short, bounded line) → the adaptive throttle → the request, carrying the remaining deadline,
 * the criticality and the attempt number, and aborted (socket released) when the attempt's time
 * is up, its slot held until the request has actually settled. The callee's answer is read for
 * its signal; refusals become typed errors carrying `signal` and `retryAfterMs`, and are retried
 * only when the work is idempotent, the signal invites it, the budget allows it and the wait
 * fits the deadline. Refusals made here, and whatever the caller itself did (a malformed
 * request, its own deadline, giving up), never count against the dependency.
 *
 * The rooms: `settings.ts` (options → settings), `client.ts` (the one path of a call),
 * `attempt.ts` (a call's and an attempt's records, and the verdict an attempt ends with),
 * `attempt-end.ts` (that verdict recorded with each part, the attempt's place freed),
 * `retries-after.ts` (the retry loop after a failed first attempt), `gates.ts` (the breaker and the throttle in an attempt's way), `work.ts` (`fetch` and `call`
 * as work), `call-state.ts` (a call's options, with what the ambient context fills in),
 * `fallback.ts` (`retryOn`'s held answer and the fallback, at a call's end), `base-url.ts`,
 * `types.ts` (the public shapes).
 *
 * @module
 */
import { bridgeBreaker, bridgeLimit } from '../channels/bridges.js';
import { Client } from './client.js';
import { settingsOf } from './settings.js';
import type { Dependency, DependencyOptions } from './types.js';

export type {
  CallOptions,
  DeadlineInput,
  Dependency,
  DependencyContext,
  DependencyFallback,
  DependencyOptions,
  DependencyRetryOptions,
  FallbackCode,
  FetchLike,
} from './types.js';

/**
 * Creates a dependency.
 *
 * @example
 * const users = dependency({ name: 'users', baseUrl: 'http://users.internal', limit: 32, timeoutMs: 2_000 });
 * const res = await users.fetch('/v1/users/42', undefined, { deadline: incoming.deadline });
 */
export function dependency(options: DependencyOptions): Dependency {
  const client = new Client(settingsOf(options));
  // Its breaker's changes and an adaptive cap's moves go on the channels, named after it.
  bridgeBreaker(client.name, client.breaker);
  bridgeLimit({ dependency: client.name }, options.limit);
  return client;
}
